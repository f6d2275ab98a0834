"""One `p4scope run lag-failover --mode mininet` (root), through the
tester's run folder, runner and report (tester/run.py): one Mininet
testbed per policy, as the DUT is compiled per policy (a v1model
selector's fields are fixed when the program is compiled).

The set-up: clients h1..hN on DUT ports 1..N; the server bonded over the
member ports (topologies.lag: a tc bond, this kernel has no bonding driver),
its host on the first member. The server's bond is the simplest faithful far
end of the trunk: seed 004's trunk ends in a server's adapters, and a host
needs nothing of the DUT but its links, where a second switch would add its
own forwarding to what is measured. Every DUT link is shaped to the line
rate, so a member carries one port's worth.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Optional

from ..driver import RunResult
from ..runner import Case, Tables, Tick, run_cases, store_part
from ..seedcsv import derive_csvs
from ..testbed import compile_pipeline
from ..tester import run as tester_run
from . import EXPERIMENT
from .cases import plan, run_parameters
from .mininet_measure import MininetLagMeasure
from .mininet_params import MininetLagParams
from .policies import POLICIES

Echo = Callable[[str], None]
SET_UP = ("clients h1..hN on DUT ports 1..N send to a server bonded over the DUT's member "
          "ports (a tc bond in the server's namespace, topologies.lag): seed 004's trunk ends "
          "in a server's adapters, and a host adds nothing of its own forwarding to what is "
          "measured, as a second switch would")
LINK_STATE = ("member links taken down and up with `ip link set` on the DUT's side; p4scope "
              "switch follows its interfaces' operstate (as BMv2's port monitor, woken by "
              "rtnetlink at once) and tells its engine (watch ports, frames to a down port "
              "dropped); P4Runtime has no port-status message, so the controller watches the "
              "DUT's links itself (every 5 ms) and rewrites the LAG group")


def _build(program: Path, pipe: Any, out: Path) -> Any:
    """The DUT compiled for a policy (`pipe`), written into `out` for the
    switch (a DutBuild)."""
    from ..mininet.testbed import DutBuild

    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{program.stem}.json"
    path.write_bytes(pipe.device_config)
    (out / f"{program.stem}.p4info.txtpb").write_text(str(pipe.p4info))
    return DutBuild(path, pipe)


class _BedPerPolicy:
    """run_cases' measure: one MininetTestbed at a time, made (and the DUT
    compiled) at a policy's first case, stopped before the next policy's;
    a policy the DUT cannot do needs none."""

    def __init__(self, p: MininetLagParams, seed: int, program: Path, pipes: dict[str, Any],
                 where: Path, store: Callable, echo: Echo):
        self.p, self.seed, self.program, self.where = p, seed, program, where
        self.pipes = pipes
        self.store, self.echo = store, echo
        self.policy: Optional[str] = None
        self.bed: Any = None
        self.measure: Optional[MininetLagMeasure] = None

    def _open(self, policy: str) -> MininetLagMeasure:
        from ..tester.mininet import MininetTestbed

        if policy != self.policy:
            self.close()
            p = self.p
            build = _build(self.program, self.pipes[policy], self.where / "build" / policy)
            self.bed = MininetTestbed(
                p.tester_ports, p.dut, self.where / "mininet" / policy, p.rate_bps,
                link_bw_bps=int(p.rate_bps), link_queue=p.link_queue, dut_build=build,
                trunks={p.server_port: p.members}, watch_links=True, log=self.echo)
            self.policy = policy
            self.measure = MininetLagMeasure(self.bed, p, self.seed, self.store)
        assert self.measure is not None
        return self.measure

    def __call__(self, case: Case, tick: Tick) -> Tables:
        policy = case.params["policy"]
        if not POLICIES[policy].supported:
            return MininetLagMeasure(None, self.p, self.seed, self.store)(case, tick)
        return self._open(policy)(case, tick)

    def close(self) -> None:
        if self.bed is not None:
            bed, self.bed, self.policy, self.measure = self.bed, None, None, None
            bed.stop()


def execute_mininet(p: MininetLagParams, seed: int, program: Path, results: Path,
                    run_id: Optional[str], progress: bool = True, report: bool = True,
                    echo: Echo = print) -> RunResult:
    """The run in Mininet against the reference DUT in `p.dut`; the caller
    has checked that this host can run Mininet and the DUT."""
    from ..tester.mininet import parse_dut

    p.check()
    if not Path(program).is_file():
        raise FileNotFoundError(f"{program}: the reference DUT is not there (run from the "
                                "repository's top folder, or pass --program)")
    pipes = {n: compile_pipeline(program, POLICIES[n].defines)  # errors before the run folder
             for n in p.policies if POLICIES[n].supported}
    cases = plan(p)
    dut = parse_dut(p.dut)
    meta = {"parameters": {"lag_failover": {
        **run_parameters(p, seed, "offset_ns", {"port": p.server_port, "trunk": list(p.members)}),
        "set_up": SET_UP, "link_state": LINK_STATE}},
        "seed": seed, "testbed": "mininet",
        "dut": {"name": dut.name, "kind": dut.kind, "label": dut.label},
        "program": {"source": str(program), "compiler": "p4scope", "per_policy": "build/<policy>"},
        "clock": "wall clock (Mininet: p4scope-trafgen on the tester hosts, real time)"}
    run = tester_run.begin(EXPERIMENT, "mininet", results, run_id, cases, meta, echo)
    per = _BedPerPolicy(p, seed, Path(program), pipes, run.path,
                        lambda t, df: store_part(run, t, df), echo)
    try:
        outcome = run_cases(run, cases, per, derive=derive_csvs, progress=progress)
    finally:
        per.close()
    return tester_run.finish(run, outcome, report)
