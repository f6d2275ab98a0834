"""`p4scope run fairness --instrument tap` in virtual time (issue 18): the
reference DUT with its own traffic-manager profile and a tap switch on
each of its links; each ingress port's share of the congested port, of
its queue and its drops as the taps see them, against the DUT's own
ground truth. Every frame reported: exact (the bars hold with nothing to
spare); sampled every 2^n us: the delivered shares estimated within
their standard error, the rest not inferred (no verdict)."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from typer.testing import CliRunner

from p4scope.cli import app
from p4scope.experiments import testbed as tb
from p4scope.experiments import traffic
from p4scope.experiments.fairness import plan as fx
from p4scope.experiments.fairness import tap_virtual as ftv
from p4scope.experiments.fairness.params import FairnessParams
from p4scope.experiments.params import EngineOptions
from p4scope.experiments.tap import shares as sh
from p4scope.experiments.tap import truth as tt
from p4scope.experiments.tap import virtual as tv
from p4scope.experiments.tap import virtual_run as vr

PORTS = (24, 25, 26)


@pytest.fixture(scope="module")
def programs():
    return tb.compile_dut(), tb.compile_dut(vr.TAP_SOURCE)


def measured(programs, profile: str, duration_ns: int, warmup_ns: int, sample_log2_us=None):
    """One 3:1 case into a 1 MB DUT (its buffer full within the warm-up,
    so the window has drops)."""
    profs = EngineOptions(1.0, 1.0, 256, 1).profiles(profile)
    fp = FairnessParams(combinations=(PORTS,), duration_ns=duration_ns,
                        warmup_ns=warmup_ns).check()
    case = fx.plan(fp, profs)[0]
    ports, flows = vr.fabric_ports([case])
    dut, tap = programs
    with tv.TappedDut(dut, tap, profs[profile], ports, flows, seed=1,
                      apply_profile=traffic.apply_profile, sample_log2_us=sample_log2_us) as td:
        return ftv.measure(td, profs[profile], case, lambda f: None)


@pytest.mark.parametrize("profile, shares", [("fair", (1 / 3, 1 / 3, 1 / 3)),
                                             ("unfair", (1 / 2, 1 / 4, 1 / 4))])
def test_every_frame_the_taps_shares_are_the_duts(programs, profile, shares):
    t = measured(programs, profile, 150_000, 75_000)
    s = t["tap_shares"].set_index("ingress_port").loc[list(PORTS)]
    assert (s["bw_error_pp"].abs() < 1e-9).all() and (s["pkt_error_pp"].abs() < 1e-9).all()
    assert (s["tap_frames"] == s["truth_frames"]).all() and (s["tap_bytes"] == s["truth_bytes"]).all()
    assert s["tap_bw_share"].to_numpy() == pytest.approx(shares, abs=0.01)  # the DUT's profile
    assert s["queue_error_pp"].abs().max() <= sh.SHARE_TOL_PP
    assert (s["tap_drops"] == s["truth_drops"]).all() and s["truth_drops"].sum() > 0
    e = t["tap_errors"].iloc[0]
    assert e["reports_lost"] == 0 and e["collector_drops"] == 0
    assert e["peak_tap_bytes"] == pytest.approx(e["peak_reference_bytes"], abs=1514)
    for c in sh.CHECKS + ("all_pass",):
        assert tt.state(e[c]) is True, c
    # fairness's own tables, the instrument's shares being the taps'
    fair = t["fairness"].iloc[0]
    assert fair["instrument"] == "tap" and fair["dut"] == "p4scope"
    # the sinks count a frame a link and the egress tap's store and forward later
    assert abs(fair["instrument_share_err_pp"]) < 0.5
    assert set(t["instrument_shares"]["delivered_frames"]) == set(s["tap_frames"].astype(int))
    assert not t["tap_series"].empty and not t["tap_reference"].empty


def test_sampled_the_delivered_shares_are_estimated_within_their_standard_error(programs):
    """The first frame of every 1 us leaving the DUT: about one sample a
    microsecond; each port's share within 4 standard errors of the truth;
    the queue, its shares and the drops not inferred (no verdict)."""
    t = measured(programs, "fair", 1_000_000, 200_000, sample_log2_us=0)
    s = t["tap_shares"]
    e = t["tap_errors"].iloc[0]
    assert 750 <= e["samples"] <= 850 and e["sample_interval_us"] == 1
    assert s["samples"].sum() == e["samples"]
    assert (s["bw_error_pp"].abs() <= 4 * s["bw_standard_error_pp"]).all()
    assert s["bw_standard_error_pp"].max() == pytest.approx(
        sh.standard_error_pp(1 / 3, int(e["samples"])), rel=0.1)
    assert s["tap_queue_share"].isna().all() and s["tap_drops"].isna().all()
    for c in sh.CHECKS[1:]:
        assert tt.state(e[c]) is None, c
    assert tt.state(e["all_pass"]) is tt.state(e["delivered_shares_within_tolerance"])
    assert "tap_series" not in t
    assert e["reports"] < 5000  # every frame would be about 60,000


def test_the_sampled_estimate_on_hand_made_samples():
    """Samples name their ingress port by source MAC; bandwidth share is
    the fraction of samples, packet share weighs each by 1 / its wire
    bytes; the totals come from the cumulative counts."""
    from p4scope.experiments.tap.inference import FROM, TapFrame
    from p4scope.experiments.testbed import host_mac

    w = tv.wiring([1, 2, 3])

    def sample(t, src, size, pkts, nbytes):
        key = host_mac(3).to_bytes(6, "big") + host_mac(src).to_bytes(6, "big") + b"\x08\x00"
        return TapFrame(t, 0, FROM, 3 + 256, size, key, 0, nbytes, 0, pkts, 0x103)

    # 4 samples: 3 from port 1 (1476 B + 24 on the wire), 1 from port 2 (76 + 24)
    fs = [sample(1000, 1, 1476, 10, 15000), sample(2000, 1, 1476, 20, 30000),
          sample(3000, 2, 76, 30, 45000), sample(4000, 1, 1476, 41, 60000)]
    d = sh.sampled_delivered(fs, w, 3, (0, 10_000))
    bw, pkt = d.shares([1, 2])
    assert d.k == 4 and d.samples == {1: 3, 2: 1}
    assert bw == pytest.approx([0.75, 0.25])
    inv1, inv2 = 3 / 1500, 1 / 100
    assert pkt == pytest.approx([inv1 / (inv1 + inv2), inv2 / (inv1 + inv2)])
    assert sum(d.frames.values()) == pytest.approx(41 - 10 + 1)
    assert sh.sampled_delivered(fs, w, 3, (5000, 6000)).k == 0


def test_a_run_and_its_report(tmp_path):
    """The CLI with every frame keeps a shorter window unless given; the
    report names the DUT, checks each case and says what sampling would
    cost."""
    r = CliRunner().invoke(app, [
        "run", "fairness", "--instrument", "tap", "--ports", ",".join(map(str, PORTS)),
        "--profiles", "fair", "--buffer-mb", "1", "--jobs", "1", "--no-progress",
        "--results", str(tmp_path), "--run-id", "ft"], env={"COLUMNS": "200"})
    assert r.exit_code == 0, r.output
    run = tmp_path / "ft"
    meta = json.loads((run / "run.json").read_text())
    assert meta["status"] == "complete" and meta["tap"]["sample_interval_us"] == 0
    fp = meta["parameters"]["fairness"]
    assert (fp["duration_ns"], fp["warmup_ns"]) == (ftv.TAP_DURATION_US * 1000,
                                                   ftv.TAP_WARMUP_US * 1000)
    err = pd.read_parquet(run / "tap_errors.parquet")
    assert err["all_pass"].astype(bool).all()
    html = (run / "report.html").read_text()
    assert "seen by the taps in its path" in html
    assert "1 of 1 cases pass every bar" in html
    assert "sampled instead (--tap-sample-us)" in html
    assert "Fairness: N:1 incast with iMIX through the reference DUT" in html
    assert "What the instrument saw" not in html and "Microburst through" not in html
    assert (run / "table3_fairness_gbps.csv").exists()
