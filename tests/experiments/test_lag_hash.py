"""`p4scope run lag-hash` (seed 002): streams over one port and over a LAG
of the reference DUT, the per-member load the DUT's hash gives, and what
a uniform hash predicts beside it."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from p4scope.cli import app
from p4scope.experiments.lag_hash import uniform
from p4scope.experiments.lag_hash.measure import plan
from p4scope.experiments.lag_hash.params import LagHashParams, run_ports

DUT = str(Path(__file__).resolve().parents[2] / "p4src" / "dut.p4")
runner = CliRunner()


# ----- the plan and the flows ----------------------------------------------------------

def test_the_seed_plan_is_12_stream_counts_on_both_setups_15_runs_each():
    p = LagHashParams().check()
    cases = plan(p)
    assert len(cases) == 24
    assert [c.case_id for c in cases[:3]] == ["lag-hash/port/1streams", "lag-hash/lag/1streams",
                                              "lag-hash/port/2streams"]
    assert cases[-1].params == {"setup": "lag", "streams": 12}
    assert p.runs == 15 and p.egress("lag") == [3, 4, 5, 6] and p.egress("port") == [2]
    assert p.label("lag") == "4x25G LAG" and p.label("port") == "1x100G port"
    assert p.defines == {}  # the DUT as shipped: crc32 over layer 3+4
    assert LagHashParams(hash="crc16", fields="layer2+3").defines == {
        "LAG_HASH": "crc16", "LAG_HASH_LAYER2_3": "1"}


def test_every_run_draws_new_distinct_ports_and_both_setups_see_the_same():
    a = run_ports(1, 12, 0)
    assert len(set(a)) == 12 and all(32768 <= x <= 60999 for x in a)
    assert run_ports(1, 12, 0) == a  # a seed per run: reproducible
    assert run_ports(1, 12, 1) != a and run_ports(2, 12, 0) != a
    assert run_ports(1, 11, 0) != a[:11]


# ----- a uniform hash, against hand-computed values ------------------------------------------

def test_uniform_hash_figures_against_hand_computed_values():
    # 4 flows on 4 members are balanced only when all differ: 4!/4^4
    assert uniform.p_balanced(4, 4) == Fraction(24, 256)
    # 12 flows leave a member idle: 1 - surjections / 4^12 (inclusion-exclusion)
    onto = 4 ** 12 - 4 * 3 ** 12 + 6 * 2 ** 12 - 4
    assert uniform.p_idle(12, 4) == 1 - Fraction(onto, 4 ** 12)
    assert float(uniform.p_idle(12, 4)) == pytest.approx(0.125, abs=0.001)
    assert uniform.p_idle(3, 4) == 1 and uniform.p_idle(1, 1) == 0
    # 3 flows on 4 members: all apart 24/64, all together 4/64, else a pair
    assert uniform.max_load_distribution(3, 4) == [0, Fraction(24, 64), Fraction(36, 64),
                                             Fraction(4, 64)]
    three = uniform.predict(3, 4)
    assert three.max_mean == pytest.approx(108 / 64)
    assert three.max_sd == pytest.approx((24 / 64 + 4 * 36 / 64 + 9 * 4 / 64 - (108 / 64) ** 2)
                                         ** 0.5)
    assert uniform.predict(2, 4).max_mean == pytest.approx(1.25)
    # 2 flows of 10 on 2 members of 15: 1/4 idle-and-20-capped-at-15, 1/2 split
    assert uniform.delivered_bps(2, 2, 10.0, 15.0) == pytest.approx(17.5)
    assert uniform.delivered_bps(12, 1, 10.25, 100.0) == pytest.approx(100.0)  # one port: capped


def test_z_and_verdict():
    pred = uniform.predict(4, 4)
    assert uniform.z_score(pred.max_mean, 15, pred) == pytest.approx(0.0)
    assert uniform.z_score(4.0, 15, pred) > uniform.WORSE_Z  # every run on one member
    assert uniform.z_score(1.0, 15, uniform.predict(1, 4)) is None  # one flow: nothing varies
    assert uniform.combined_z([1.0, None, 1.0]) == pytest.approx(2 / 2 ** 0.5)
    assert uniform.verdict(3.0) == "worse than chance" and uniform.verdict(0.5) == "within chance"
    assert uniform.verdict(-3.0) == "more even than chance"


def test_the_dut_compiles_the_chosen_hash_and_keeps_its_default():
    from p4scope.experiments.testbed import compile_dut

    def selector(defines):
        doc = json.loads(compile_dut(Path(DUT), defines).pipeline.device_config)
        (sel,) = [a["selector"] for a in doc["pipelines"][0]["action_profiles"]
                  if a["name"].endswith("lag_selector")]
        return sel["algo"], [i["value"][1] for i in sel["input"]]

    algo, fields = selector(None)
    assert algo == "crc32" and fields[-2:] == ["metadata_t.l4_src_port", "metadata_t.l4_dst_port"]
    algo, fields = selector({"LAG_HASH": "crc16", "LAG_HASH_LAYER2_3": "1"})
    assert algo == "crc16" and fields == ["dst_addr", "src_addr", "src_addr", "dst_addr",
                                          "protocol"]
    assert compile_dut(Path(DUT), {"LAG_HASH": "xor16"}).info["defines"] == {"LAG_HASH": "xor16"}


# ----- a small run in virtual time -----------------------------------------------------------

def _run(tmp: Path, run_id: str, *args: str) -> Path:
    r = runner.invoke(app, ["run", "lag-hash", *args, "--program", DUT, "--results", str(tmp),
                            "--run-id", run_id, "--no-progress"])
    assert r.exit_code == 0, r.output
    return tmp / run_id


@pytest.fixture(scope="module")
def small_run(tmp_path_factory):
    return _run(tmp_path_factory.mktemp("lag_hash"), "small", "--streams", "1,3,6", "--runs",
                "4", "--duration-us", "600", "--warmup-us", "100")


def test_each_member_carries_its_streams_up_to_its_rate(small_run):
    """A stream stays on one member; a member with n streams of 10.25
    Gbit/s carries min(n x 10.25, 25) and gives each stream its share."""
    st = pd.read_parquet(small_run / "lag_hash_streams.parquet")
    mem = pd.read_parquet(small_run / "lag_hash_members.parquet")
    frame = 9038 * 8 / 500_000  # one frame in the 500 us window, Gbit/s
    lag = mem[mem["setup"] == "lag"]
    assert set(lag["member"]) == {3, 4, 5, 6}
    assert (lag.groupby(["streams", "run"])["flows"].sum()
            == lag.groupby(["streams", "run"])["streams"].first()).all()
    want = (lag["flows"] * 10.25).clip(upper=25.0)
    assert ((lag["load_gbps"] - want).abs() <= lag["flows"].clip(lower=1) * frame).all()
    assert (st["ports_used"] == 1).all()
    on_lag = st[st["setup"] == "lag"]
    assert set(on_lag["member"]) <= {3, 4, 5, 6}
    flows = lag.set_index(["streams", "run", "member"])["flows"]
    share = on_lag.apply(lambda r: min(10.25, 25.0 / flows[(r.streams, r.run, r.member)]), axis=1)
    assert ((on_lag["achieved_gbps"] - share).abs() <= 2 * frame).all()
    port = mem[mem["setup"] == "port"]
    assert (port["member"] == 2).all()
    assert ((port["load_gbps"] - (port["flows"] * 10.25).clip(upper=100)).abs()
            <= port["flows"] * frame).all()


def test_the_seed_tables_and_the_report(small_run):
    sums = pd.read_csv(small_run / "lag_hash_sums.csv")
    assert sums["Setup"].unique().tolist() == ["1x100G port", "4x25G LAG"]
    lag = sums[sums["Setup"] == "4x25G LAG"].set_index("Run")
    assert lag.index.tolist() == ["1", "2", "3", "4", "Average", "Median", "Target"]
    assert lag.loc["Target", "6 streams"] == 61.5
    per = pd.read_csv(small_run / "lag_hash_per_stream.csv")
    six = per[(per["Setup"] == "4x25G LAG") & (per["Streams"] == 6)]
    assert six["Row"].tolist() == [f"Stream {i}" for i in range(1, 7)] + [
        "Sum", "Average", "Std. Deviation"]
    assert list(six.columns[3:]) == ["Run 1", "Run 2", "Run 3", "Run 4"]
    uni = pd.read_csv(small_run / "lag_hash_uniform.csv")
    row = uni[(uni["Setup"] == "4x25G LAG") & (uni["Streams"] == 6)].iloc[0]
    assert row["Uniform hash: P(a member idle) (%)"] == pytest.approx(
        100 * float(uniform.p_idle(6, 4)), abs=0.05)
    assert (uni.loc[uni["Setup"] == "1x100G port", "Busiest member's streams (mean)"]
            == uni.loc[uni["Setup"] == "1x100G port", "Streams"]).all()
    meta = json.loads((small_run / "run.json").read_text())
    assert meta["status"] == "complete"
    assert meta["parameters"]["lag_hash"]["hash"] == "crc32"
    assert {"lag_hash_sums", "lag_hash_per_stream", "lag_hash_member_load",
            "lag_hash_uniform"} <= set(meta["seed_tables"])
    html = (small_run / "report.html").read_text()
    assert "LAG hashing: one port vs a LAG (seed 002)" in html
    assert "The DUT&#x27;s hash over 4x25G LAG" in html or "The DUT's hash over 4x25G LAG" in html
    for png in ("lag_hash_sums", "lag_hash_loads"):
        assert (small_run / "figures" / f"{png}.png").stat().st_size > 1000


def test_a_hash_without_l4_ports_puts_every_stream_on_one_member(tmp_path):
    """The seed's streams differ in their L4 ports only: keyed on layers 2
    and 3, the DUT sends all of them down one member, and the report says
    the hash is worse than chance."""
    run = _run(tmp_path, "l23", "--setups", "lag", "--streams", "4,8", "--runs", "3",
               "--hash-fields", "layer2+3", "--duration-us", "200", "--warmup-us", "50",
               "--no-report")
    runs = pd.read_parquet(run / "lag_hash_runs.parquet")
    assert (runs["max_flows"] == runs["streams"]).all()
    assert (runs["idle_members"] == 3).all()
    uni = pd.read_csv(run / "lag_hash_uniform.csv")
    assert (uni["Verdict (all stream counts)"] == "worse than chance").all()
    meta = json.loads((run / "run.json").read_text())
    assert meta["program"]["defines"] == {"LAG_HASH_LAYER2_3": "1"}


def test_the_shipped_hash_is_within_chance_over_15_runs(tmp_path):
    """crc32 over layer 3+4, new ports every run: the busiest member over
    15 runs is what a uniform hash gives (the placements, not the rates,
    decide, so a short window does)."""
    run = _run(tmp_path, "crc32", "--setups", "lag", "--streams", "4,12", "--duration-us",
               "80", "--warmup-us", "0", "--no-report")
    uni = pd.read_csv(run / "lag_hash_uniform.csv").set_index("Streams")
    assert (uni["Runs"] == 15).all()
    assert uni.loc[4, "Uniform hash: P(balanced) (%)"] == 9.4
    assert uni.loc[12, "Uniform hash: P(a member idle) (%)"] == 12.5
    assert (uni["Verdict (all stream counts)"] == "within chance").all()
    assert (uni["z (busiest member)"].abs() < 3).all()


@pytest.mark.parametrize("args, message", [
    (["--streams", "0"], "--streams 0"),
    (["--streams", "4-2"], "--streams 4-2"),
    (["--runs", "0"], "--runs 0"),
    (["--lag", "0x25"], "--lag 0x25: a LAG with no members"),
    (["--lag", "4by25"], "--lag 4by25"),
    (["--lag", "4x0"], "--lag"),
    (["--setups", "both"], "--setups"),
    (["--hash", "md5"], "--hash md5"),
    (["--hash-fields", "layer4"], "--hash-fields layer4"),
    (["--stream-gbps", "40"], "--stream-gbps 40"),
    (["--warmup-us", "3000"], "--warmup-us"),
    (["--duration-us", "20", "--warmup-us", "0"], "--duration-us 20"),
    (["--frame-size", "20"], "--frame-size"),
    (["--profile", "fair,unfair"], "--profile"),
])
def test_bad_options_exit_2_naming_the_option(tmp_path, args, message):
    r = runner.invoke(app, ["run", "lag-hash", *args, "--results", str(tmp_path)])
    assert r.exit_code == 2, r.output
    assert message in r.output
    assert "Traceback" not in r.output
    assert list(tmp_path.iterdir()) == []
