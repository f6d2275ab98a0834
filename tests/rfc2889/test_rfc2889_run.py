"""`p4scope run rfc2889` against the reference DUT in virtual time: one
small run of every test it measures, whose figures are what the DUT's
configuration predicts, in the seed's table shapes; the address tests go
through the controller's learning path; bad options exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from p4scope.cli import app


ROOT = Path(__file__).resolve().parents[2]
DUT = str(ROOT / "p4src" / "dut.p4")
RESOLUTION = 5.0
runner = CliRunner()


def _run(out: Path, run_id: str, *args: str) -> Path:
    r = runner.invoke(app, ["run", "rfc2889", "--sizes", "64", "--ports", "4",
                            "--resolution-pct", str(RESOLUTION), "--trial-frames", "2000",
                            "--program", DUT, "--results", str(out), "--run-id", run_id,
                            "--no-progress", *args])
    assert r.exit_code == 0, r.output
    return out / run_id


@pytest.fixture(scope="module")
def suite(tmp_path_factory):
    """Every test, one size, a 16-address MAC table."""
    return _run(tmp_path_factory.mktemp("rfc2889"), "suite", "--loads", "40,100",
                "--mac-table-size", "16", "--max-addresses", "24",
                "--learning-addresses", "10", "--learn-rate-max-fps", "20000",
                "--learn-rate-resolution-fps", "250")


def csv(run: Path, name: str) -> pd.DataFrame:
    return pd.read_csv(run / f"{name}.csv")


def test_every_test_has_its_table_and_a_verdict(suite):
    s = csv(suite, "rfc2889_summary").set_index("Test")
    assert set(s.index) == {"full mesh", "partial mesh 1:N", "partial mesh N:N",
                            "congestion control", "maximum forwarding rate",
                            "address caching capacity", "address learning rate",
                            "broadcast forwarding", "forward pressure",
                            "errored frames filtering"}
    assert s.loc["maximum forwarding rate", "Result"] == "-"
    assert (s.drop("maximum forwarding rate")["Result"] == "Pass").all(), s
    meta = json.loads((suite / "run.json").read_text())
    assert meta["program"]["defines"] == {"MAC_TABLE_SIZE": "16"}
    assert meta["not_measured"] == {}


def test_the_meshes_forward_what_the_ports_can_carry(suite):
    t = csv(suite, "rfc2889_throughput").set_index("Topology")
    assert t.loc["full mesh", "Tx Rate (%)"] == 100.0
    assert t.loc["partial mesh N:N", "Tx Rate (%)"] == 100.0
    # 1:N: port 1 receives three ports' load, so a third of line rate each
    one_n = t.loc["partial mesh 1:N", "Tx Rate (%)"]
    assert 100 / 3 - RESOLUTION < one_n <= 100 / 3
    assert (t["Loss (frames)"] == 0).all() and (t["Result"] == "Pass").all()
    f = csv(suite, "rfc2889_forwarding")
    one_n = f[f["Topology"] == "partial mesh 1:N"].set_index("Tx Rate (%)")
    # offered 4x, port 1 gets 3x of it and forwards 100 %: loss (3x - 100) / 4x, less
    # the few frames port 1 still sends in the settle time
    assert one_n.loc[100.0, "64 B Loss Rate (%)"] == pytest.approx(50.0, abs=1.0)
    assert one_n.loc[40.0, "64 B Loss Rate (%)"] == pytest.approx(12.5, abs=1.0)
    full = f[f["Topology"] == "full mesh"]
    assert (full["64 B Loss Rate (%)"] == 0).all()


def test_congestion_loses_only_on_the_congested_port(suite):
    t = csv(suite, "rfc2889_congestion_control").iloc[0]
    assert t["UC-Port: Loss (%)"] == 0 and t["UC-Port: Tx"] > 0
    assert t["C-Port: Loss (%)"] == pytest.approx(100 / 3, abs=1.0)  # 150 % into 100 %
    assert t["Head-of-line blocking"] == "No" and t["Back pressure"] == "No"
    assert t["Result"] == "Pass"


def test_the_maximum_forwarding_rate_is_the_full_mesh_at_line_rate(suite):
    t = csv(suite, "rfc2889_max_forwarding_rate").iloc[0]
    assert t["Tx Rate (%)"] == 100.0 and t["Rx Frames"] == t["Tx Frames"]
    assert t["Max Forwarding Rate (% line rate)"] == pytest.approx(100.0)
    assert "full mesh's forwarding trials" in t["Note"]


def test_broadcast_reaches_every_port_at_line_rate(suite):
    t = csv(suite, "rfc2889_broadcast").iloc[0]
    assert t["Tx Rate (%)"] == 100.0 and t["Loss Frames"] == 0 and t["Result"] == "Pass"
    assert t["Receiving Ports"] == 3
    lat = csv(suite, "rfc2889_broadcast_latency").iloc[0]
    assert float(str(lat["Latency Min (us)"]).split("-")[0]) > 0
    ports = pd.read_parquet(suite / "rfc2889_broadcast_ports.parquet")
    assert sorted(ports["rx_port"]) == [2, 3, 4]
    assert (ports["rx_frames"] == ports["tx_frames"]).all()


def test_address_caching_finds_the_programs_mac_table(suite):
    t = csv(suite, "rfc2889_address_caching").iloc[0]
    # 16 entries, one of them the test port's own address
    assert t["Address Count"] == 15 and t["MAC Table Size"] == 16 and t["Result"] == "Pass"
    assert t["Monitor Port Rx Frames"] == 0 and t["Learn Port Rx Frames"] == 15
    trials = pd.read_parquet(suite / "rfc2889_address_trials.parquet")
    cache = trials[trials["test"] == "address_caching"]
    over = cache[cache["addresses"] > 15]
    assert len(over) and (~over["passed"]).all()
    assert ((over["table_full"] == over["addresses"] - 15) & (over["flooded"] > 0)).all()


def test_the_learning_rate_is_the_controllers(suite):
    r = pd.read_parquet(suite / "rfc2889_results.parquet")
    row = r[r["test"] == "address_learning"].iloc[0]
    assert row["result"] == "Pass" and 0 < row["learning_rate_fps"] < 20_000
    assert row["controller_service_ns"] > 0  # the controller's digest path took time
    trials = pd.read_parquet(suite / "rfc2889_address_trials.parquet")
    learn = trials[trials["test"] == "address_learning"]
    fastest = learn[learn["rate_fps"] == learn["rate_fps"].max()].iloc[0]
    assert not fastest["passed"] and fastest["flooded"] > 0  # it could not keep up
    assert (learn["digests_handled"] > 0).all()
    html = (suite / "report.html").read_text()
    assert "the learning rate measured is the controller's digest path" in html
    assert "Not yet measured" not in html and "Forward pressure (port 1 to port 2)" in html


def test_a_shaped_dut_shows_its_limit(tmp_path):
    run = _run(tmp_path, "shaped", "--tests", "full_mesh,broadcast", "--loads", "100",
               "--dut-rate-pct", "50")
    t = csv(run, "rfc2889_throughput").iloc[0]
    assert 50 - RESOLUTION < t["Tx Rate (%)"] <= 50
    f = csv(run, "rfc2889_forwarding").iloc[0]
    assert f["64 B Loss Rate (%)"] == pytest.approx(50.0, abs=1.0)
    b = csv(run, "rfc2889_broadcast").iloc[0]
    assert 50 - RESOLUTION < b["Tx Rate (%)"] <= 50


@pytest.mark.parametrize("args, option", [
    (["--tests", "forward_pressure", "--ifg-bits", "100"], "--ifg-bits 100"),
    (["--tests", "errored_frames", "--sizes", "9000"], "--sizes 9000"),
    (["--ports", "2", "--tests", "address_caching"], "--ports 2"),
    (["--line-rate", "fast"], "--line-rate"),
    (["--learning-addresses", "0"], "--learning-addresses"),
])
def test_bad_options_exit_2_naming_the_option(tmp_path, args, option):
    r = runner.invoke(app, ["run", "rfc2889", *args, "--results", str(tmp_path), "--no-progress"])
    assert r.exit_code == 2, r.output
    assert option in r.output
    assert "Traceback" not in r.output
    assert not any(tmp_path.iterdir())  # nothing started
