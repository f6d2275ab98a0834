"""RFC 2889's forward pressure and errored frames filtering on the engine's
Ethernet MACs: the reference DUT keeps Ethernet's 96-bit gap under a
source that sends with 88 bits, and drops undersize, oversize and bad-FCS
frames while forwarding the valid ones (Pass); a DUT set to send with an
88-bit gap, or whose port passes errored frames, fails."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from p4scope.cli import app
from p4scope.experiments.rfc2889 import errored
from p4scope.experiments.rfc2889 import verdicts
from p4scope.experiments.rfc2889.pressure import utilisation_pct


ROOT = Path(__file__).resolve().parents[2]
DUT = str(ROOT / "p4src" / "dut.p4")
runner = CliRunner()


def test_forward_pressure_fails_only_below_96_bits():
    assert verdicts.forward_pressure_result(96.0, 100e9) == verdicts.PASS
    assert verdicts.forward_pressure_result(95.95, 100e9) == verdicts.PASS  # within 1 ps at 100G
    assert verdicts.forward_pressure_result(88.0, 100e9) == verdicts.FAIL
    assert verdicts.forward_pressure_result(95.9, 1e9) == verdicts.FAIL
    assert verdicts.forward_pressure_result(None, 100e9) == verdicts.NONE
    # the seed's Tx max. util. at 64 B with an 88-bit gap, and the standard gap's 100 %
    assert utilisation_pct(64, 88) == pytest.approx(101.205, abs=1e-3)
    assert utilisation_pct(1518, 96) == pytest.approx(100.0)


def test_errored_frames_pass_only_when_none_is_forwarded_and_no_valid_one_lost():
    assert verdicts.errored_passed(valid_tx=100, valid_rx=100, errored_rx=0)
    assert not verdicts.errored_passed(valid_tx=100, valid_rx=100, errored_rx=1)
    assert not verdicts.errored_passed(valid_tx=100, valid_rx=99, errored_rx=0)
    assert not verdicts.errored_passed(valid_tx=0, valid_rx=0, errored_rx=0)


def test_the_errored_mix_shares_the_load_and_its_runts_fit_a_tag():
    mix = {s.name: s for s in errored.streams(1, 2, 512, 100.0, 1500, 100e9)}
    assert {n: (s.size, s.errored) for n, s in mix.items()} == {
        "valid": (512, None), "oversize": (1522, "oversize"), "undersize": (60, "undersize"),
        "bad_fcs": (512, "bad_fcs")}
    assert sum(s.rate.value for s in mix.values()) == pytest.approx(100.0)
    assert len(mix["undersize"].headers["template"]) + 16 + 4 <= 60
    assert sorted(s.start_ns for s in mix.values()) == [s.start_ns for s in mix.values()]


def _run(tmp: Path, run_id: str, *args: str) -> Path:
    r = runner.invoke(app, ["run", "rfc2889", "--tests", "forward_pressure,errored_frames",
                            "--sizes", "64,1518", "--ports", "2", "--loads", "50,100",
                            "--trial-frames", "1000", "--program", DUT, "--results", str(tmp),
                            "--run-id", run_id, "--no-progress", *args])
    assert r.exit_code == 0, r.output
    return tmp / run_id


def csv(run: Path, name: str) -> pd.DataFrame:
    return pd.read_csv(run / f"{name}.csv")


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("rfc2889_mac")
    return {"reference": _run(tmp, "reference"),
            "flawed": _run(tmp, "flawed", "--pass-errored", "--dut-ifg-bits", "88")}


def test_the_reference_dut_keeps_the_gap_and_filters_errored_frames(runs):
    run = runs["reference"]
    fp = csv(run, "rfc2889_forward_pressure").set_index("Frame Size (B)")
    assert list(fp["Result"]) == ["Pass", "Pass"]
    assert fp.loc[64, "Tx max. util. (%)"] == pytest.approx(101.205, abs=1e-3)
    assert (fp["Rx max. util. (%)"] == 100.0).all() and (fp["Min. Rx Gap (bit)"] == 96.0).all()
    assert fp.loc[64, "Tx Frames"] > 1000, "1.2 % more than 1000 frames' time at line rate"
    ef = csv(run, "rfc2889_errored_frames")
    assert list(ef["Tx Rate (%)"]) == [50.0, 100.0, 50.0, 100.0]
    assert (ef["Result"] == "Pass").all()
    assert (ef[["Tx Oversize", "Tx Undersize", "Tx FCS Error", "Tx Valid"]] > 0).all().all()
    assert (ef[["Rx Oversize", "Rx Undersize", "Rx FCS Error"]] == 0).all().all()
    assert (ef["Rx Valid"] == ef["Tx Valid"]).all()
    dropped = ef["Tx Oversize"] + ef["Tx Undersize"] + ef["Tx FCS Error"]
    assert (ef["DUT MAC Dropped"] == dropped).all()
    s = csv(run, "rfc2889_summary").set_index("Test")
    assert s.loc["forward pressure", "Result"] == "Pass"
    assert s.loc["errored frames filtering", "Result"] == "Pass"
    assert "Forward pressure (port 1 to port 2)" in (run / "report.html").read_text()


def test_a_dut_that_sends_too_fast_or_passes_errored_frames_fails(runs):
    run = runs["flawed"]
    fp = csv(run, "rfc2889_forward_pressure")
    assert (fp["Result"] == "Fail").all() and (fp["Min. Rx Gap (bit)"] == 88.0).all()
    assert fp["Rx max. util. (%)"].iloc[0] == pytest.approx(101.205, abs=1e-3)
    ef = csv(run, "rfc2889_errored_frames")
    assert (ef["Result"] == "Fail").all()
    for kind in ("Oversize", "FCS Error"):
        assert (ef[f"Rx {kind}"] == ef[f"Tx {kind}"]).all(), kind
    # passed by the MAC, runts still meet the reference DUT's own check in its
    # pipeline (port_config's min_frame: 60 bytes without the FCS)
    assert (ef["Rx Undersize"] == 0).all()
    assert (ef["DUT MAC Dropped"] == 0).all()
    s = csv(run, "rfc2889_summary").set_index("Test")
    assert (s["Result"] == "Fail").all()
