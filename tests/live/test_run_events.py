"""The runner's on_event hook: what an observer (the live dashboard) is
told as a run goes, and that an observer can never end a run."""

import pandas as pd

from p4scope.experiments import rundir as rd
from p4scope.experiments.runner import Case, run_cases


def _cases(n):
    return [Case(f"g/c{i}/x", "g", f"case {i}", {"i": i}) for i in range(n)]


def _measure(case, tick):
    tick(0.5)
    return {"streams": pd.DataFrame({"case_id": [case.case_id], "rx": [case.params["i"]]})}


def test_an_observer_is_told_every_step_with_the_tables_stored(tmp_path):
    run = rd.RunDir.create(tmp_path, "g")
    run.start({"experiment": "g"})
    seen = []
    out = run_cases(run, _cases(2), _measure, progress=False, on_event=seen.append)
    assert out.complete
    assert [(e.kind, e.index) for e in seen] == [
        ("start", 0), ("case_begin", 0), ("tick", 0), ("case_end", 0),
        ("case_begin", 1), ("tick", 1), ("case_end", 1), ("end", 0)]
    assert all(e.rundir is run and e.planned == 2 for e in seen)
    assert seen[2].fraction == 0.5 and seen[2].case.case_id == "g/c0/x"
    ends = [e for e in seen if e.kind == "case_end"]
    assert [e.status for e in ends] == ["complete", "complete"]
    assert list(ends[1].tables["streams"]["rx"]) == [1]
    assert ends[0].wall_s >= 0
    assert seen[-1].outcome is out


def test_a_failing_observer_is_dropped_and_the_run_goes_on(tmp_path, capsys):
    run = rd.RunDir.create(tmp_path, "g")
    run.start({"experiment": "g"})
    calls = []

    def bad(ev):
        calls.append(ev.kind)
        if ev.kind == "case_begin":
            raise RuntimeError("boom")

    out = run_cases(run, _cases(3), _measure, progress=False, on_event=bad)
    assert out.complete and out.done == 3
    assert calls == ["start", "case_begin"]
    assert "observer failed" in capsys.readouterr().err
    assert len(pd.read_parquet(run.path / "streams.parquet")) == 3


def test_a_failed_case_is_told_with_its_status_and_the_run_partial(tmp_path):
    run = rd.RunDir.create(tmp_path, "g")
    run.start({"experiment": "g"})

    def measure(case, tick):
        if case.params["i"] == 1:
            raise ValueError("no")
        return _measure(case, tick)

    seen = []
    out = run_cases(run, _cases(3), measure, progress=False, on_event=seen.append)
    assert not out.complete
    assert [(e.kind, e.status) for e in seen if e.kind == "case_end"] == [
        ("case_end", "complete"), ("case_end", "failed")]
    assert seen[-1].kind == "end" and not seen[-1].outcome.complete
