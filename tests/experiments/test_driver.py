"""The run driver's plumbing (plan, embedded switch, run folder, report) with
a stand-in for the measurement; the real measurement is tested end to end
in test_end_to_end.py once the engine offers sources and sinks."""

import json

import pytest

pytest.importorskip("p4scope_dataplane")

from p4scope.experiments import driver  # noqa: E402
from p4scope.experiments.params import FairnessParams, MicroburstParams, default_profiles  # noqa: E402


def _req(tmp_path, **kw):
    return driver.RunRequest(
        "all", default_profiles(1 << 20),
        MicroburstParams(sizes_2to1=(64, 1518), sizes_4to1=(), combos_2to1=(("Test 1", (1, 2)),)),
        FairnessParams(combinations=((1, 2, 3),), duration_ns=20_000, warmup_ns=10_000),
        results=tmp_path, run_id="r", progress=False, **kw)


def test_driver_writes_run_folder_and_report(tmp_path):
    seen = []

    def factory(vs, profiles):
        assert vs.sw is not None and set(profiles) == {"fair", "unfair"}

        def measure(case, tick):
            seen.append(case.case_id)
            tick(1.0)
            return {}
        return measure

    res = driver.execute(_req(tmp_path), measure_factory=factory, echo=lambda s: None)
    assert res.outcome.complete and res.outcome.done == 6
    assert seen[0] == "microburst/2to1-test1/64B/fair"
    assert "fairness/3to1-1-3/imix/unfair" in seen
    meta = json.loads((res.path / "run.json").read_text())
    assert meta["status"] == "complete" and meta["experiment"] == "all"
    assert meta["program"]["name"] == "dut" and len(meta["program"]["json_sha256"]) == 64
    tm = meta["parameters"]["profiles"]["unfair"]["tm_config"]
    assert tm["defaults"]["arbitration"]["mode"] == "groups"
    assert tm["defaults"]["rate_bps"] == 100_000_000_000
    assert meta["parameters"]["microburst"]["sizes_2to1"] == [64, 1518]
    assert any(t["what"].startswith("2:1 burst: what 2 VOQs") for t in meta["theory"])
    assert "p4scope_dataplane" in meta["versions"]
    assert res.report == res.path / "report.html" and res.report.is_file()


def test_no_cases_is_an_error(tmp_path):
    req = driver.RunRequest("microburst", default_profiles(), None, None, results=tmp_path,
                            progress=False)
    with pytest.raises(ValueError):
        driver.execute(req, measure_factory=lambda vs, p: None, echo=lambda s: None)
    assert list(tmp_path.iterdir()) == []
