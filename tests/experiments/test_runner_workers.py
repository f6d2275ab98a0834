"""The runner's worker processes (--jobs): cases stored in plan order
whichever worker ends first, a failure or an interrupt ends the run
partial and leaves no worker behind."""

from __future__ import annotations

import pandas as pd

from p4scope.experiments.rundir import RunDir, load_table
from p4scope.experiments.runner import Case, Workers, run_cases
from tests.experiments import runner_workers


def _cases(extra: dict[int, dict] = {}) -> list[Case]:  # noqa: B006 (read only)
    # the first case is the slowest: later ones finish before it
    return [Case(f"c{i}", "probe", f"case {i}", {"sleep": 0.6 if i == 0 else 0.0,
                                                 **extra.get(i, {})}) for i in range(5)]


workers_alive = runner_workers.run_processes


def _run(tmp_path, cases, tag: str = "w") -> tuple:
    run = RunDir.create(tmp_path, "probe", "r")
    run.start({})
    out = run_cases(run, cases, None, progress=False,
                    workers=Workers(2, runner_workers.start, (tag,), runner_workers.measure))
    return run, out


def test_cases_are_stored_in_plan_order(tmp_path):
    run, out = _run(tmp_path, _cases())
    assert out.complete and out.done == 5
    rows = load_table(run.path, "rows")
    assert list(rows["case_id"]) == [f"c{i}" for i in range(5)]
    assert set(rows["tag"]) == {"w"}
    assert rows["pid"].nunique() == 2, "two workers measured"
    assert not workers_alive()


def test_a_failure_in_a_worker_ends_the_run_partial(tmp_path):
    run, out = _run(tmp_path, _cases({2: {"fail": True}}))
    assert not out.complete and out.done == 2
    assert out.reason == "case c2 failed: RuntimeError: boom in c2"
    cases = load_table(run.path, "cases")
    assert list(cases["status"]) == ["complete", "complete", "failed"]
    assert list(load_table(run.path, "rows")["case_id"]) == ["c0", "c1"]
    assert not workers_alive(), "the workers were stopped"


def test_a_worker_that_cannot_start_fails_its_first_case(tmp_path):
    """A pool restarts a worker whose start raises, for ever: the run must
    end instead, with the reason."""
    run, out = _run(tmp_path, _cases(), tag="broken")
    assert not out.complete and out.done == 0
    assert out.reason == ("case c0 failed: RuntimeError: the worker could not start: "
                          "OSError: no switch here")
    assert not workers_alive()


def test_workers_take_the_costliest_cases_first_and_store_them_in_plan_order(tmp_path):
    """A run's last cases to end are short ones (no worker idles at the end
    while another measures a long case alone); the tables keep plan order."""
    weights = [1.0, 5.0, 2.0, 5.0, 9.0]
    cases = [Case(f"c{i}", "probe", f"case {i}", {}, weight=w) for i, w in enumerate(weights)]
    run = RunDir.create(tmp_path, "probe", "r")
    run.start({})
    out = run_cases(run, cases, None, progress=False,
                    workers=Workers(1, runner_workers.start, ("w",), runner_workers.measure_in_turn))
    assert out.complete and out.done == 5
    rows = load_table(run.path, "rows")
    assert list(rows["case_id"]) == ["c0", "c1", "c2", "c3", "c4"]
    assert list(rows["turn"]) == [4, 1, 3, 2, 0], "heaviest first, ties in plan order"
    assert not workers_alive()


def _chained(tmp_path, extra: dict[int, dict] = {}) -> tuple:  # noqa: B006 (read only)
    # c0, c2, c4 one chain (what a later one measures uses an earlier one's
    # result), the others alone and slow, so both workers have work
    cases = [Case(f"c{i}", "probe", f"case {i}",
                  {"sleep": 0.0 if i % 2 == 0 else 0.3, **extra.get(i, {})},
                  weight=1.0, chain="a" if i % 2 == 0 else None) for i in range(6)]
    run = RunDir.create(tmp_path, "probe", "r")
    run.start({})
    out = run_cases(run, cases, None, progress=False,
                    workers=Workers(2, runner_workers.start, ("w",), runner_workers.measure_chained))
    return run, out


def test_a_chains_cases_are_measured_in_plan_order_by_one_worker(tmp_path):
    run, out = _chained(tmp_path)
    assert out.complete and out.done == 6
    rows = load_table(run.path, "rows")
    assert list(rows["case_id"]) == [f"c{i}" for i in range(6)]
    chain = rows[rows["case_id"].isin(["c0", "c2", "c4"])]
    assert list(chain["before"]) == ["", "c0", "c2"], "each saw the one before it"
    assert chain["pid"].nunique() == 1
    assert rows["pid"].nunique() == 2, "the other worker measured the others"
    # rows a case stored as it went (worker_store) are kept, in plan order
    trials = load_table(run.path, "trials")
    assert list(trials["case_id"]) == [f"c{i}" for i in range(6) for _ in range(2)]
    assert not workers_alive()


def test_a_failure_in_a_chain_ends_the_run_there_keeping_what_the_case_stored(tmp_path):
    run, out = _chained(tmp_path, {2: {"fail": True}})
    assert not out.complete and out.done == 2
    assert out.reason == "case c2 failed: RuntimeError: boom in c2"
    assert list(load_table(run.path, "cases")["status"]) == ["complete", "complete", "failed"]
    assert list(load_table(run.path, "rows")["case_id"]) == ["c0", "c1"]
    # as in one process (store_part): the failed case's trials stay
    assert list(load_table(run.path, "trials")["case_id"]) == ["c0", "c0", "c1", "c1", "c2", "c2"]
    assert not workers_alive()


def test_worker_tasks_keep_chains_together_costliest_first():
    from p4scope.experiments.runner import worker_tasks

    cases = [Case("a", "p", "a", {}, weight=1.0, chain="x"),
             Case("b", "p", "b", {}, weight=3.0),
             Case("c", "p", "c", {}, weight=2.5, chain="x"),
             Case("d", "p", "d", {}, weight=3.0)]
    assert worker_tasks(cases) == [[0, 2], [1], [3]]
