"""`p4scope run rfc2889 --chain N`: the forwarding tests through N reference
DUTs in a row in virtual time, the tester on the first and the last switch
(seed 003's 4 layers). An uncongested mesh through the chain forwards
exactly what one switch does (same frames sent and received, no loss,
the same throughput), only later; broadcast crosses the chain; the run
has seed 003's latency per layer, each layer later than the one before,
and the hops add up to the tester's latency. Bad --chain values, and
tests a chain does not run, exit 2 naming the option."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from p4scope.cli import app
from p4scope.experiments.linerate import frame_time_ns
from p4scope.experiments.rfc2889.chain import EAST_LINK, WEST_LINK, home_switches, toward


ROOT = Path(__file__).resolve().parents[2]
DUT = str(ROOT / "p4src" / "dut.p4")
LAYERS = 4
runner = CliRunner()


def _run(out: Path, run_id: str, *args: str) -> Path:
    r = runner.invoke(app, ["run", "rfc2889", "--sizes", "64", "--ports", "4",
                            "--tests", "full_mesh,partial_mesh_nn,broadcast", "--loads", "50",
                            "--resolution-pct", "10", "--trial-frames", "1000",
                            "--program", DUT, "--results", str(out), "--run-id", run_id,
                            "--no-progress", "--no-report", *args])
    assert r.exit_code == 0, r.output
    return out / run_id


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    out = tmp_path_factory.mktemp("chain")
    return _run(out, "one"), _run(out, "chain", "--chain", str(LAYERS))


def trials(run: Path) -> pd.DataFrame:
    t = pd.read_parquet(run / "rfc2889_trials.parquet")
    return t.sort_values(["test", "procedure", "trial"]).reset_index(drop=True)


def test_the_tester_is_on_the_first_and_the_last_switch():
    home = home_switches([1, 2, 3, 4, 5], 4)
    assert home == {1: 0, 2: 0, 3: 0, 4: 3, 5: 3}
    assert toward(home, 0, 2) == 2 and toward(home, 0, 4) == EAST_LINK
    assert toward(home, 2, 1) == WEST_LINK and toward(home, 2, 5) == EAST_LINK
    assert toward(home, 3, 1) == WEST_LINK and toward(home, 3, 5) == 5


def test_an_uncongested_mesh_through_the_chain_forwards_as_one_switch(runs):
    one, chain = runs
    meta = json.loads((chain / "run.json").read_text())
    assert meta["testbed"] == "chain" and meta["chain"]["switches"] == LAYERS
    assert meta["chain"]["first_switch_ports"] == [1, 2]
    assert meta["chain"]["last_switch_ports"] == [3, 4]
    assert set(meta["not_through_chain"]) >= {"address_caching", "address_learning"}
    a, b = trials(one), trials(chain)
    meshes = lambda t: t[t["test"].isin(["full_mesh", "partial_mesh_nn"])]  # noqa: E731
    a, b = meshes(a), meshes(b)
    assert len(a) == len(b) > 0
    for col in ("value", "tx_frames", "rx_frames", "lost", "misdelivered", "passed"):
        assert a[col].tolist() == b[col].tolist(), col
    fwd = b[b["procedure"] == "forwarding"]
    assert (fwd["lost"] == 0).all() and (fwd["rx_frames"] == fwd["tx_frames"]).all()
    # N:N sends every frame across the chain: it arrives later than through one switch
    nn = lambda t: t[(t["test"] == "partial_mesh_nn") & (t["procedure"] == "forwarding")]  # noqa
    assert nn(b)["lat_min_ns"].iloc[0] > nn(a)["lat_min_ns"].iloc[0]
    for name in ("rfc2889_forwarding", "rfc2889_throughput"):
        x, y = pd.read_csv(one / f"{name}.csv"), pd.read_csv(chain / f"{name}.csv")
        pd.testing.assert_frame_equal(x.drop(columns=["Tx Rate (b/s)", "Tx Rate (f/s)"],
                                             errors="ignore"),
                                      y.drop(columns=["Tx Rate (b/s)", "Tx Rate (f/s)"],
                                             errors="ignore"))


def test_broadcast_crosses_the_chain(runs):
    _, chain = runs
    b = pd.read_csv(chain / "rfc2889_broadcast.csv").iloc[0]
    assert b["Result"] == "Pass" and b["Loss Frames"] == 0 and b["Receiving Ports"] == 3
    ports = pd.read_parquet(chain / "rfc2889_broadcast_ports.parquet").set_index("rx_port")
    assert (ports["lost"] == 0).all()
    # port 2 is on the source's switch, ports 3 and 4 behind the other three
    assert ports.loc[3, "lat_min_ns"] > ports.loc[2, "lat_min_ns"]
    assert ports.loc[4, "lat_min_ns"] == ports.loc[3, "lat_min_ns"]


def test_the_latency_per_layer_grows_layer_by_layer_and_the_hops_add_up(runs):
    one, chain = runs
    assert not (one / "rfc2889_layer_latency.csv").exists()
    rows = pd.read_parquet(chain / "rfc2889_layers.parquet")
    assert sorted(rows["layers"].unique()) == list(range(1, LAYERS + 1))
    assert set(rows["direction"]) == {"east", "west"} and (rows["frame_size"] == 64).all()
    assert (rows["rx_frames"] == rows["tx_frames"]).all()
    for _, d in rows.groupby("direction"):
        lat = d.sort_values("layers")["lat_min_ns"].to_numpy()
        assert (lat[1:] > lat[:-1]).all(), d
    assert (rows["hops_sum_max_diff_ns"] <= frame_time_ns(64, 100e9)).all()
    table = pd.read_csv(chain / "rfc2889_layer_latency.csv")
    assert table["layer"].tolist() == list(range(1, LAYERS + 1))
    assert list(table.columns[:3]) == ["layer", "frame size (B)", "latency avg (us)"]
    hops = pd.read_parquet(chain / "rfc2889_hops.parquet")
    assert sorted(hops["hop"].unique()) == list(range(1, LAYERS + 1))
    assert set(hops["direction"]) == {"east", "west"}


@pytest.mark.parametrize("args, message", [
    (["--chain", "0"], "--chain 0"),
    (["--chain", "17"], "--chain 17"),
    (["--chain", "2", "--tests", "address_caching"], "--tests: address_caching"),
    (["--chain", "2", "--tests", "errored_frames"], "--tests: errored_frames"),
    (["--mode", "mininet", "--chain", "2"], "--chain: for --mode virtual only"),
])
def test_bad_chain_options_exit_2_naming_the_option(tmp_path, args, message):
    r = runner.invoke(app, ["run", "rfc2889", *args, "--results", str(tmp_path)])
    assert r.exit_code == 2, r.output
    assert message in r.output
    assert list(tmp_path.iterdir()) == []
