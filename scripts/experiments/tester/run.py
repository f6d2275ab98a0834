"""One run of an experiment built on the tester (rfc2544, frame-loss, ...):
plan its cases, start its testbed (the embedded switch in virtual time, or
a DUT in Mininet), measure into a new run folder with every trial stored
as it ends, derive the seed tables, render the report.

The experiment gives its cases and a measure maker: `make(bed=, store=)`
returns `measure(case, tick) -> tables`, where `store(table, rows)` keeps
rows at once (a search's trials). Parameters are checked and the DUT
compiled before the run folder is made. In virtual time the cases may be
measured in `jobs` worker processes, each with its own switch and its own
measure (so `make` must pickle: a functools.partial of a class, not a
lambda); cases that use what an earlier case measured name a chain
(runner.Case.chain) and are measured in one worker, in plan order. The
tables are the same for any number of workers. In Mininet a run may measure
several DUTs one after another (a comparison), each on its own testbed;
a DUT not installed here is skipped, saying why (available_duts).
"""

from __future__ import annotations

import re
import sys
from contextlib import nullcontext
from dataclasses import asdict
from pathlib import Path
from typing import Any, Callable, Optional, Protocol, Sequence

from .. import sources, testbed, traffic
from ..driver import (RunResult, ShippedDut, begin_worker, keep_worker_switch,
                      measure_in_worker, versions)
from ..params import MAX_JOBS, Profile, check_int
from ..report import RENDERER
from ..rundir import RunDir
from ..runner import Case, Workers, abandon, run_cases, store_part, worker_store
from ..seedcsv import derive_csvs
from .virtual import VirtualTestbed

Echo = Callable[[str], None]
Store = Callable[[str, Any], None]


class MakeMeasure(Protocol):
    """`make(bed=, store=)`: the experiment's measure on a testbed."""

    def __call__(self, *, bed: Any, store: Store) -> Callable: ...


def begin(experiment: str, mode: str, results: Path, run_id: Optional[str], cases: list[Case],
          meta: dict[str, Any], echo: Echo) -> RunDir:
    sources.tell_if_stale(echo)
    run = RunDir.create(results, experiment, run_id)
    run.start({"experiment": experiment, "mode": mode, "renderer": RENDERER, **meta,
               "versions": versions(), "command": " ".join(sys.argv),
               "cases": {"planned": len(cases), "done": 0}})
    on = meta.get("cluster")
    echo(f"p4scope run: {len(cases)} cases into {run.path}"
         + (f" on {on['workers']} Dask workers ({on['scheduler']})" if on else ""))
    return run


def measure(run: RunDir, cases: list[Case], bed: Any, make: MakeMeasure, progress: bool):
    return run_cases(run, cases, make(bed=bed, store=lambda table, df: store_part(run, table, df)),
                     derive=derive_csvs, progress=progress)


def finish(run: RunDir, outcome, report: bool, jobs: int = 1) -> RunResult:
    """The run's result, its report rendered (`jobs`: processes drawing the PNGs)."""
    rep = None
    if report:
        from ..report import render

        rep = render(run.path, jobs=jobs)
    return RunResult(run.path, outcome, rep)


def _worker_start(dut: Any, profile: Profile, seed: int, rate_bps: float,
                  make: MakeMeasure) -> None:
    """A worker's own embedded switch and measure, as `virtual` makes them
    in the run's process (`dut`: driver.ShippedDut)."""
    begin_worker()
    vs = testbed.VirtualSwitch(dut.load(), profile, seed, apply_profile=traffic.apply_profile)
    vs.start()
    keep_worker_switch(vs, make(bed=VirtualTestbed(vs, rate_bps, profile), store=worker_store))


def virtual(experiment: str, cases: list[Case], meta: dict[str, Any], profile: Profile,
            seed: int, program: Path, rate_bps: float, make: MakeMeasure, results: Path,
            run_id: Optional[str], progress: bool = True, report: bool = True,
            echo: Echo = print, defines: Optional[dict[str, str]] = None,
            jobs: int = 1, cluster: Optional[str] = None) -> RunResult:
    """The run against the reference DUT in the embedded switch, in virtual
    time, under `profile`; `meta` has the experiment's parameters;
    `defines`: -D macros the DUT is compiled with; `jobs`: worker
    processes measuring the cases (1: this process), or `cluster` the
    address of a Dask scheduler whose workers measure them."""
    from .. import cluster as dask_cluster

    profile.check()
    check_int(jobs, 1, MAX_JOBS, "--jobs")
    address = dask_cluster.parse_address(cluster) if cluster is not None else None
    dut = testbed.compile_dut(program, defines)
    meta = {**meta, "seed": seed, "program": dut.info, "testbed": "virtual",
            "dut": {"name": "p4scope", "label": "the reference DUT in the embedded switch"},
            "clock": "virtual time (the engine's event clock; no wall-clock dependence)"}
    meta["parameters"] = {**meta.get("parameters", {}), "profiles": {
        profile.name: {**asdict(profile), "tm_config": profile.tm_config(rate_bps)}}}
    start = (ShippedDut.of(dut), profile, seed, rate_bps, make)
    # ClusterUnreachable before the run folder is made
    with dask_cluster.connected(address) if address is not None else nullcontext() as client:
        if client is not None:
            meta["cluster"] = {"scheduler": str(address),
                               "workers": dask_cluster.worker_count(client)}
        run = begin(experiment, "virtual", results, run_id, cases, meta, echo)
        outcome = None
        try:
            if client is not None or (jobs > 1 and len(cases) > 1):
                outcome = run_cases(run, cases, None, derive=derive_csvs, progress=progress,
                                    workers=Workers(jobs, _worker_start, start, measure_in_worker,
                                                    client=client))
            else:
                with testbed.VirtualSwitch(dut, profile, seed,
                                           apply_profile=traffic.apply_profile) as vs:
                    outcome = measure(run, cases, VirtualTestbed(vs, rate_bps, profile), make,
                                      progress)
        except BaseException as e:  # noqa: BLE001 - the run folder says why; the caller exits
            if outcome is None:
                return RunResult(run.path, abandon(run, len(cases), e, "before the first case"),
                                 None)
            echo(f"p4scope run: stopping the embedded switch failed: {type(e).__name__}: {e}")
    return finish(run, outcome, report, jobs)


def available_duts(duts: Sequence[Any]) -> tuple[list[Any], dict[str, str]]:
    """The DUTs (tester.mininet.Dut) this host can run, and why each other
    one is skipped (tester.mininet.check_installed: e.g. BMv2 not installed)."""
    from .mininet import DutMissing, check_installed

    keep, skipped = [], {}
    for d in duts:
        try:
            check_installed(d)
        except DutMissing as e:
            skipped[d.name] = str(e)
        else:
            keep.append(d)
    return keep, skipped


class _DutByDut:
    """run_cases' measure for the cases of one or more DUTs (a case names
    its DUT in params["dut"]; with one DUT it need not): one MininetTestbed
    at a time, made at the DUT's first case and started by its first trial
    (so a DUT that cannot start fails that case), stopped before the next
    DUT's testbed is made."""

    def __init__(self, duts: list[Any], new_bed: Callable[[Any], Any], make: MakeMeasure,
                 store: Store):
        self.duts = {d.name: d for d in duts}
        self.first = duts[0].name
        self.new_bed, self.make, self.store = new_bed, make, store
        self.name: Optional[str] = None
        self.bed: Any = None
        self.fn: Optional[Callable] = None

    def dut_of(self, case: Case) -> str:
        return case.params.get("dut", self.first)

    def __call__(self, case: Case, tick: Callable[[float], None]):
        name = self.dut_of(case)
        if name != self.name or self.fn is None:
            self.close()
            self.bed = self.new_bed(self.duts[name])
            self.name, self.fn = name, self.make(bed=self.bed, store=self.store)
        return self.fn(case, tick)

    def close(self) -> None:
        if self.bed is not None:
            bed, self.bed, self.name, self.fn = self.bed, None, None, None
            bed.stop()


def _folder_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name)


def mininet(experiment: str, cases: list[Case], meta: dict[str, Any],
            duts: str | Sequence[str], ports: list[int], rate_bps: float, make: MakeMeasure,
            results: Path, run_id: Optional[str], *, skipped: Optional[dict[str, str]] = None,
            link_bw_bps: Optional[float] = None, link_queue: Optional[int] = None,
            mtu: Optional[int] = None, progress: bool = True, report: bool = True,
            echo: Echo = print) -> RunResult:
    """The run in Mininet (root) against the DUT `duts` (tester.mininet
    parse_dut), or against each of several DUTs in turn: cases name their
    DUT in params["dut"] and run DUT by DUT, each DUT on its own testbed
    (in mininet/<dut> of the run folder), `make` called once per DUT. The
    caller has checked that this host can run Mininet and the DUTs
    (available_duts); `skipped` (DUT name -> why) goes into run.json and
    is printed, and cases for a skipped DUT are dropped."""
    from .mininet import MininetTestbed, parse_dut

    names = [duts] if isinstance(duts, str) else list(duts)
    dut_list = [parse_dut(n) for n in names]
    if not dut_list:
        raise ValueError("nothing to measure: no DUT")
    skipped = dict(skipped or {})
    for name, why in skipped.items():
        echo(f"p4scope run: skipping the {name} DUT: {why}")
    order = {d.name: i for i, d in enumerate(dut_list)}
    cases = [c for c in cases if c.params.get("dut") not in skipped]
    unknown = sorted({c.params["dut"] for c in cases if c.params.get("dut", names[0]) not in order})
    if unknown:
        raise ValueError(f"cases for a DUT not in the run: {', '.join(unknown)}")
    if not cases:
        raise ValueError("nothing to measure: no cases (every DUT was skipped)")
    cases.sort(key=lambda c: order[c.params.get("dut", names[0])])  # stable: DUT by DUT
    described = [{"name": d.name, "kind": d.kind, "label": d.label} for d in dut_list]
    meta = {**meta, "testbed": "mininet", "duts": described, "skipped": skipped,
            **({"dut": described[0]} if len(described) == 1 else {}),
            "clock": "wall clock (Mininet: p4scope-trafgen on the tester hosts, real time)"}
    run = begin(experiment, "mininet", results, run_id, cases, meta, echo)
    try:
        build = None
        if any(d.p4 for d in dut_list):
            from ..mininet.testbed import build_dut

            build = build_dut(run.path / "build")
            run.update(program={"source": "p4src/dut.p4", "compiler": "p4scope",
                                "json": str(build.json_path.relative_to(run.path))})
    except BaseException as e:  # noqa: BLE001 - the run folder says why; the caller exits
        return RunResult(run.path, abandon(run, len(cases), e, "before the first case"), None)

    def new_bed(dut: Any) -> MininetTestbed:
        where = run.path / "mininet"
        if len(dut_list) > 1:
            where = where / _folder_name(dut.name)
        return MininetTestbed(ports, dut, where, rate_bps, link_bw_bps=link_bw_bps,
                              link_queue=link_queue, mtu=mtu, dut_build=build, log=echo)

    per_dut = _DutByDut(dut_list, new_bed, make, lambda table, df: store_part(run, table, df))
    try:
        outcome = run_cases(run, cases, per_dut, derive=derive_csvs, progress=progress)
    finally:
        per_dut.close()
    return finish(run, outcome, report)
