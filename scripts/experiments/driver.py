"""One `p4scope run`: plan the cases, start the embedded switch, measure into
a new run folder, derive the seed tables, render the report.

Nothing is started before the parameters are checked and the engine is
known to offer what the experiments need, so a bad command line leaves no
half-made run folder behind.
"""

from __future__ import annotations

import platform
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Optional

from . import cluster, drawing, registry, sources, theory
from .params import MAX_JOBS, Profile, as_dict, check_int, check_seed
from .report import RENDERER
from .rundir import RunDir
from .runner import Case, Outcome, Workers, abandon, run_cases
from .seedcsv import derive_csvs

RESULTS = Path("results")


@dataclass
class RunRequest:
    """A run on the reference DUT in virtual time: `parts` maps each
    registered experiment to run (registry.VirtualDut) to its checked
    parameters; `experiment` names the run (one part's name, or `all`)."""

    experiment: str
    profiles: dict[str, Profile]
    parts: dict[str, Any]
    seed: int = 1
    results: Path = RESULTS
    run_id: Optional[str] = None
    program: Path = Path("p4src/dut.p4")
    progress: bool = True
    report: bool = True
    jobs: int = 1
    """Worker processes measuring cases at once (each its own engine and
    switch); the tables are the same for any number."""
    on_event: Optional[Callable[..., None]] = None
    """Told as the run goes (runner.RunEvent), e.g. the live dashboard."""
    cluster: Optional[str] = None
    """A Dask scheduler's address (tcp://HOST:PORT) or local:N: its workers
    measure the cases instead (cluster.py); the same tables again."""

    def plan(self) -> list[Case]:
        cases: list[Case] = []
        for name, params in self.parts.items():
            cases += _virtual(name).plan(params, self.profiles)
        return cases


def _virtual(name: str) -> "registry.VirtualDut":
    v = registry.get(name).virtual
    if v is None:
        raise ValueError(f"{name} does not run on the reference DUT in virtual time")
    return v


@dataclass
class RunResult:
    path: Path
    outcome: Outcome
    report: Optional[Path]


def versions() -> dict[str, str]:
    import numpy
    import pandas
    import pyarrow

    from . import testbed
    from .. import __version__

    return {"p4scope": __version__, "p4scope_dataplane": testbed.engine_version(),
            **sources.fingerprint(),
            "python": platform.python_version(), "pandas": pandas.__version__,
            "pyarrow": pyarrow.__version__, "numpy": numpy.__version__,
            "platform": platform.platform()}


def theory_lines(profiles: dict[str, Profile], parts: dict[str, Any]) -> list[dict[str, Any]]:
    """What each profile predicts, stated with its numbers (run.json, report):
    the shared pool and the dynamic threshold's limits, then what each
    experiment of the run adds."""
    out = []
    for p in profiles.values():
        B, a = p.shared_bytes, p.alpha
        if p.reserved_bytes:
            out.append({"profile": p.name, "what": "shared pool B",
                        "formula": f"buffer − ports' reserves = {p.buffer_bytes:,} − "
                                   f"{p.reserved_bytes:,} (port "
                                   + ", ".join(str(q) for q, c in sorted(p.ports.items())
                                               if c.get("reserved_bytes")) + ")",
                        "value": B, "unit": "bytes"})
        if p.per_ingress_admission:
            for k in (2, 4):
                lim = k * theory.dt_queue_limit(B, a, k)
                out.append({"profile": p.name, "what": f"{k}:1 burst: what {k} VOQs of one queue hold",
                            "formula": f"k·α·B/(1+k·α) = {k}·{a:g}·{B:,}/(1+{k}·{a:g})",
                            "value": round(lim), "unit": "bytes"})
        else:
            out.append({"profile": p.name, "what": "one congested queue's limit",
                        "formula": f"α·B/(1+α) = {a:g}·{B:,}/(1+{a:g})",
                        "value": round(theory.dt_queue_limit(B, a)), "unit": "bytes"})
        for name, params in parts.items():
            out += _virtual(name).theory(p, params)
    return out


def instrument_meta(program_info: dict[str, Any]) -> dict[str, Any]:
    """How the instrument is read in this run (see measure.py)."""
    from . import measure

    return {"mode": "INT reports captured at the collector port",
            "interval_us": 1 << measure.INTERVAL_LOG2_US,
            "depth_unit": program_info.get("queue_depth_unit", "bytes"),
            "clock_step_ns": program_info.get("instrument_clock_ns", 1000)}


def start_meta(req: RunRequest, program_info: dict[str, Any], cases: list[Case]) -> dict[str, Any]:
    params: dict[str, Any] = {
        "profiles": {n: {**as_dict(p), "tm_config": p.tm_config(_rate(req))}
                     for n, p in req.profiles.items()},
    }
    for name, p in req.parts.items():
        params[name] = as_dict(p)
    return {
        "experiment": req.experiment, "mode": "virtual", "renderer": RENDERER,
        "parameters": params, "seed": req.seed,
        "program": program_info, "versions": versions(),
        "instrument": instrument_meta(program_info),
        "clock": "virtual time (the engine's event clock; no wall-clock dependence)",
        "command": " ".join(sys.argv), "theory": theory_lines(req.profiles, req.parts),
        "cases": {"planned": len(cases), "done": 0},
    }


def _rate(req: RunRequest) -> float:
    return next((p.rate_bps for p in req.parts.values()), 100e9)


def measure_case(vs: Any, profiles: dict[str, Profile]) -> Callable[[Case, Any], dict]:
    """The per-case measure function: the case's experiment measures it
    under the case's profile."""
    def measure(case: Case, tick: Any) -> dict:
        return _virtual(case.experiment).measure(vs, profiles[case.params["profile"]], case, tick)
    return measure


_WORKER: dict[str, Any] = {}
"""In a worker process: its switch's measure function, and what stops it."""


@dataclass(frozen=True)
class ShippedDut:
    """The compiled DUT as a worker gets it (its P4Info serialized: the
    message itself does not pickle), so the worker (a --jobs process, or a
    Dask worker on another machine) neither compiles again nor needs the
    P4 source, and runs exactly what this run compiled."""

    name: str
    p4info: bytes
    device_config: bytes
    source: str

    @classmethod
    def of(cls, dut: Any) -> "ShippedDut":
        p = dut.pipeline
        return cls(p.name, p.p4info.SerializeToString(), p.device_config, dut.source)

    def load(self) -> Any:
        from p4scope.control import Pipeline
        from finsy.proto import p4i

        from .testbed import DutProgram

        return DutProgram(Pipeline(self.name, p4i.P4Info.FromString(self.p4info),
                                   self.device_config), self.source)


def _worker_start(program: ShippedDut, profiles: dict[str, Profile], seed: int) -> None:
    """A worker's own embedded switch, as the sequential run starts it."""
    from . import testbed, traffic

    dut = program.load()
    begin_worker()
    vs = testbed.VirtualSwitch(dut, next(iter(profiles.values())), seed,
                               apply_profile=traffic.apply_profile)
    vs.start()
    keep_worker_switch(vs, measure_case(vs, profiles))


def begin_worker() -> None:
    """A worker's start for a run: its stacks printed on SIGUSR1, freed
    memory kept for the next case, and the switch it kept for an earlier
    run (a Dask worker measures run after run) stopped."""
    from .. import stacks
    from . import heap

    stacks.on_sigusr1()
    heap.keep_freed_memory()
    stop = _WORKER.pop("stop", None)
    if stop is not None:
        stop()


def keep_worker_switch(vs: Any, measure: Callable[[Case, Any], Any]) -> None:
    """`vs` (started) and its measure function are this worker's until the
    next run's start, or the process's end."""
    from multiprocessing import util

    _WORKER["stop"] = util.Finalize(vs, vs.close, exitpriority=10)
    _WORKER["measure"] = measure


def measure_in_worker(case: Case) -> dict:
    """Workers.measure: the case measured by the worker's kept measure."""
    return _WORKER["measure"](case, lambda fraction: None)


def execute(req: RunRequest, measure_factory: Optional[Callable] = None,
            echo: Callable[[str], None] = print,
            apply_profile: Optional[Callable] = None) -> RunResult:
    """Runs `req`; see the module docstring. `measure_factory(vs, profiles)`
    returns the per-case measure function and `apply_profile(engine,
    profile)` configures a fresh engine's traffic manager (tests pass their
    own; by default the experiments' and traffic.apply_profile)."""
    from . import testbed, traffic

    check_seed(req.seed)
    check_int(req.jobs, 1, MAX_JOBS, "--jobs")
    address = cluster.parse_address(req.cluster) if req.cluster is not None else None
    cases = req.plan()
    if not cases:
        raise ValueError("nothing to measure: no cases")
    sources.tell_if_stale(echo)
    if measure_factory is None:
        measure_factory = measure_case
        apply_profile = apply_profile or traffic.apply_profile
    program = testbed.compile_dut(req.program)
    # the report's drawing processes start (and import matplotlib) with the
    # run, while cores are still free, not after its last case
    with drawing.pool(req.jobs if req.report else 1) as png_pool:
        if address is None or measure_factory is not measure_case:
            run, outcome, measured = _measure(req, cases, program, measure_factory, echo,
                                              apply_profile)
        else:
            with cluster.connected(address) as client:  # ClusterUnreachable before the run folder
                run, outcome, measured = _measure(req, cases, program, measure_factory, echo,
                                                  apply_profile, client)
        if not measured:
            return RunResult(run.path, outcome, None)
        rep = None
        if req.report:
            from .report import render

            try:
                rep = render(run.path, tables=run.tables, jobs=req.jobs, png_pool=png_pool)
            except KeyboardInterrupt:  # the results are safe; `p4scope report` renders later
                echo(f"p4scope run: report not rendered (interrupted); "
                     f"run `p4scope report {run.path}`")
    return RunResult(run.path, outcome, rep)


def _measure(req: RunRequest, cases: list[Case], program: Any, measure_factory: Callable,
             echo: Callable[[str], None], apply_profile: Optional[Callable],
             client: Any = None) -> tuple[RunDir, Outcome, bool]:
    """The run folder made and the cases measured into it: on `client`'s
    Dask cluster, in --jobs worker processes or in this process; False
    when the run ended before its first case (nothing to report)."""
    from . import testbed

    meta = start_meta(req, program.info, cases)
    if client is not None:
        meta["cluster"] = {"scheduler": str(req.cluster), "workers": cluster.worker_count(client)}
    run = RunDir.create(req.results, req.experiment, req.run_id)
    run.start(meta)
    echo(f"p4scope run: {len(cases)} cases into {run.path}"
         + (f" on {meta['cluster']['workers']} Dask workers ({req.cluster})" if client else ""))
    first = next(iter(req.profiles.values()))
    outcome: Optional[Outcome] = None
    try:
        if client is not None:
            outcome = run_cases(run, cases, None, derive=derive_csvs, progress=req.progress,
                                workers=Workers(0, _worker_start,
                                                (ShippedDut.of(program), req.profiles, req.seed),
                                                measure_in_worker, client=client),
                                on_event=req.on_event)
        elif req.jobs > 1 and len(cases) > 1 and measure_factory is measure_case:
            outcome = run_cases(run, cases, None, derive=derive_csvs, progress=req.progress,
                                workers=Workers(req.jobs, _worker_start,
                                                (ShippedDut.of(program), req.profiles, req.seed),
                                                measure_in_worker),
                                on_event=req.on_event)
        else:
            with testbed.VirtualSwitch(program, first, req.seed,
                                       apply_profile=apply_profile) as vs:
                measure = measure_factory(vs, req.profiles)
                outcome = run_cases(run, cases, measure, derive=derive_csvs,
                                    progress=req.progress, on_event=req.on_event)
    except BaseException as e:  # noqa: BLE001 - the run folder says why; the caller exits
        if outcome is not None:  # the cases are stored; only stopping the switch failed
            echo(f"p4scope run: stopping the embedded switch failed: {type(e).__name__}: {e}")
        else:
            outcome = abandon(run, len(cases), e, "before the first case")
            return run, outcome, False
    return run, outcome, True
