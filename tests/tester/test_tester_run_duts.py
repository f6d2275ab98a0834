"""The tester's Mininet run (tester/run.py) against several DUTs: one run
folder, the DUTs one after another, each on a testbed of its own that is
stopped before the next one is made (also when a case fails), a DUT not
installed skipped with the reason in run.json; one DUT as before. The
testbed is a stand-in here (no root needed): what is checked is the order
of making, measuring and stopping."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from p4scope.experiments.mininet import testbed as mn_testbed
from p4scope.experiments.runner import Case
from p4scope.experiments.tester import mininet as tm
from p4scope.experiments.tester import run as tester_run


@pytest.fixture
def events(monkeypatch, tmp_path):
    """Every testbed made, case measured and testbed stopped, in order."""
    log: list[tuple] = []

    class StandIn:
        def __init__(self, ports, dut, run_dir, rate_bps, **kw):
            self.dut = dut
            log.append(("make", dut.name, run_dir.relative_to(tmp_path).as_posix()))

        def stop(self):
            log.append(("stop", self.dut.name))

    monkeypatch.setattr(tm, "MininetTestbed", StandIn)
    monkeypatch.setattr(mn_testbed, "build_dut",
                        lambda d: SimpleNamespace(json_path=d / "dut.json"))
    return log


def measure_maker(log, fail_on=None):
    """make(bed, store) -> measure(case, tick), logging each case measured."""
    def make(bed, store):
        def measure(case, tick):
            if case.case_id == fail_on:
                raise RuntimeError("the DUT did not start")
            log.append(("measure", case.case_id, bed.dut.name))
            return {}
        return measure
    return make


def case(dut, size):
    return Case(f"x/{size}/{dut}", "x", f"x {size} B, {dut}", {"size": size, "dut": dut})


def test_duts_run_one_after_another_each_on_its_own_testbed(tmp_path, events):
    cases = [case(d, s) for s in (64, 1518) for d in ("bridge", "p4scope", "bmv2")]
    echoed = []
    res = tester_run.mininet("x", cases, {}, ["bridge", "p4scope"], [1, 2], 100e6,
                             measure_maker(events), tmp_path, "two",
                             skipped={"bmv2": "BMv2 is not installed"}, progress=False,
                             report=False, echo=echoed.append)
    assert res.outcome.complete and res.outcome.done == 4
    assert events == [
        ("make", "bridge", "two/mininet/bridge"),
        ("measure", "x/64/bridge", "bridge"), ("measure", "x/1518/bridge", "bridge"),
        ("stop", "bridge"),
        ("make", "p4scope", "two/mininet/p4scope"),
        ("measure", "x/64/p4scope", "p4scope"), ("measure", "x/1518/p4scope", "p4scope"),
        ("stop", "p4scope")]
    meta = json.loads((tmp_path / "two" / "run.json").read_text())
    assert [d["name"] for d in meta["duts"]] == ["bridge", "p4scope"] and "dut" not in meta
    assert meta["skipped"] == {"bmv2": "BMv2 is not installed"}
    assert meta["cases"] == {"planned": 4, "done": 4}
    assert any("skipping the bmv2 DUT: BMv2 is not installed" in e for e in echoed)


def test_a_failing_dut_ends_the_run_partial_with_its_testbed_stopped(tmp_path, events):
    cases = [case(d, 64) for d in ("bridge", "p4scope")]
    res = tester_run.mininet("x", cases, {}, ["bridge", "p4scope"], [1, 2], 100e6,
                             measure_maker(events, fail_on="x/64/p4scope"), tmp_path, "fail",
                             progress=False, report=False, echo=lambda s: None)
    assert not res.outcome.complete and "the DUT did not start" in res.outcome.reason
    assert events[-2:] == [("make", "p4scope", "fail/mininet/p4scope"), ("stop", "p4scope")]


def test_one_dut_runs_as_before(tmp_path, events):
    """A single DUT: cases need not name it, its testbed is mininet/ itself,
    and run.json's `dut` describes it."""
    cases = [Case(f"x/{s}", "x", "x", {"size": s}) for s in (64, 128)]
    res = tester_run.mininet("x", cases, {}, "bridge", [1, 2], 100e6, measure_maker(events),
                             tmp_path, "one", progress=False, report=False, echo=lambda s: None)
    assert res.outcome.complete
    assert events == [("make", "bridge", "one/mininet"), ("measure", "x/64", "bridge"),
                      ("measure", "x/128", "bridge"), ("stop", "bridge")]
    meta = json.loads((tmp_path / "one" / "run.json").read_text())
    assert meta["dut"]["name"] == "bridge" and meta["skipped"] == {}


def test_a_case_for_a_dut_not_in_the_run_is_refused(tmp_path, events):
    with pytest.raises(ValueError, match="not in the run: p4scope"):
        tester_run.mininet("x", [case("p4scope", 64)], {}, ["bridge"], [1, 2], 100e6,
                           measure_maker(events), tmp_path, "bad", progress=False,
                           report=False, echo=lambda s: None)
    assert list(tmp_path.iterdir()) == []


def test_available_duts_names_what_is_missing(monkeypatch):
    def check(dut):
        if dut.kind == "bmv2":
            raise tm.DutMissing("BMv2 is not installed")

    monkeypatch.setattr(tm, "check_installed", check)
    keep, skipped = tester_run.available_duts([tm.parse_dut(d) for d in ("bridge", "bmv2")])
    assert [d.name for d in keep] == ["bridge"] and skipped == {"bmv2": "BMv2 is not installed"}
