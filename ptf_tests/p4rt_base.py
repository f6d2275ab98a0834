"""Layer 1 of the suite: a PTF test that is a P4Runtime controller.

`P4RuntimeTest.setUp` does what p4c's PTF base test does: connect to
`grpcaddr`, open the stream and arbitrate (device_id 0, election_id 1),
and push the pipeline with SetForwardingPipelineConfig(VERIFY_AND_COMMIT),
the BMv2 JSON sent raw as p4_device_config. It pushes before every test,
so registers, counters and table state start from scratch each time.

Everything P4Runtime goes through `self.sw`, p4scope.control's `Switch`
(names resolved in the P4Info, never hard-coded ids), recording what it
writes so that tearDown undoes it (p4rt_undo.py) and, with
check_cleanup, reads back that nothing is left. Queue settings made over
the run-time Thrift server (`set_queue`) are reset in tearDown as well:
they outlive pipeline pushes on both switches.

Packet helpers wrap ptf.testutils so tests read as sentences:
`send`, `expect` (one port), `expect_on` (exactly these ports),
`expect_nothing` (ptf's negative check on every port), `receive`.
"""

from __future__ import annotations

import logging
import time
from contextlib import contextmanager
from typing import Callable, Iterable, Optional

import ptf
import ptf.testutils as tu
from ptf.base_tests import BaseTest

from p4scope.control import Client, P4RuntimeClientError, Pipeline

import known_gaps
import p4rt_params
from p4rt_undo import RecordingSwitch

log = logging.getLogger("p4scope.ptf")

QLEN = 2000
"""Frames PTF keeps per port: telemetry tests receive hundreds of reports."""
BMV2_QUEUE_DEPTH = 64
"""simple_switch's default egress queue depth (packets); p4scope's is the same."""

_pipelines: dict[tuple[str, str], Pipeline] = {}


def pipeline_of(params: p4rt_params.SuiteParams) -> Pipeline:
    key = (params.config, params.p4info)
    if key not in _pipelines:
        _pipelines[key] = Pipeline.from_files(params.config, params.p4info)
    return _pipelines[key]


class P4RuntimeTest(BaseTest):
    """Stream, arbitration, pipeline, name lookups, autocleanup, packets."""

    def setUp(self) -> None:
        BaseTest.setUp(self)
        self.params = p4rt_params.read()
        self.dataplane = ptf.dataplane_instance
        self.dataplane.set_qlen(QLEN)
        self.ports = sorted(p for d, p in ptf.config["port_map"] if d == 0)
        self.cpu_port = self.params.cpu_port
        self._queues: set[int] = set()
        self._runtime = None
        self.sent: dict[int, int] = {}
        """Frames sent per port in this test (counted by before_send)."""
        self.client = self._connect()
        self.sw = RecordingSwitch(self.client)
        self.sw.set_pipeline(pipeline_of(self.params))
        self._defaults = self.sw.default_actions() if self.params.check_cleanup else {}
        self.dataplane.flush()

    def _connect(self, patience: float = 5.0) -> Client:
        """Opens the stream and becomes primary. The previous test's stream,
        closed in its tearDown, may still hold the same election id on the
        switch for a moment (the server notices the close asynchronously):
        the arbitration is retried until it is gone."""
        deadline = time.monotonic() + patience
        while True:
            c = Client(self.params.grpcaddr, self.params.device_id, self.params.election_id)
            try:
                return c.connect()
            except P4RuntimeClientError as e:
                c.close()
                if time.monotonic() > deadline:
                    raise
                log.info("arbitration refused (%s); retrying", e)
                time.sleep(0.05)

    def tearDown(self) -> None:
        problems: list[str] = []
        try:
            problems += self.sw.undo_all()
            if self.params.check_cleanup and not problems:
                problems += [f"left behind: {x}" for x in self.sw.leftovers(self._defaults)]
            problems += self._reset_queues()
        finally:
            if self._runtime is not None:
                self._runtime.close()
            self.client.close()
            BaseTest.tearDown(self)
        if problems:
            raise AssertionError("autocleanup: " + "; ".join(problems))

    # ----- ports ---------------------------------------------------------------------

    def need_ports(self, n: int) -> list[int]:
        """The first `n` ports; skips the test when PTF was given fewer."""
        if len(self.ports) < n:
            self.skipTest(f"needs {n} ports, PTF has {len(self.ports)}")
        return self.ports[:n]

    @contextmanager
    def known_gap(self, name: str):
        """Assertions that need a feature the target may lack (known_gaps.py)."""
        g = known_gaps.gap(self.params.target, name)
        try:
            yield
        except AssertionError as e:
            if g is not None:
                # unittest puts the test's own message on the last line
                last = str(e).strip().splitlines()[-1] if str(e).strip() else "assertion failed"
                self.skipTest(f"known gap of {self.params.target}: {g.reason} [{last}]")
            raise
        if g is not None and g.always:
            self.fail(f"{self.params.target} passes what known_gaps.py lists as its gap "
                      f"'{name}': take it off the list")

    # ----- packets -------------------------------------------------------------------

    def send(self, port: int, pkt, count: int = 1) -> None:
        tu.send_packet(self, port, pkt, count)

    def before_send(self, pkt, device_number: int = 0, port_number: int = -1) -> None:
        """ptf calls this for every frame it sends: the count lets a layer
        above wait until the switch has taken every frame in."""
        self.sent[port_number] = self.sent.get(port_number, 0) + 1

    def expect(self, pkt, port: int, timeout: Optional[float] = None) -> None:
        """`pkt` (a packet or a ptf Mask) arrives on `port`."""
        tu.verify_packet(self, pkt, port, timeout)

    def expect_on(self, pkt, ports: Iterable[int]) -> None:
        """`pkt` arrives on each of `ports` and nothing arrives anywhere else."""
        for p in ports:
            tu.verify_packet(self, pkt, p)
        self.expect_nothing()

    def expect_nothing(self) -> None:
        """No (further) packet on any port: ptf's negative check, after
        `wait_taken_in` (a layer above knows how to tell)."""
        self.wait_taken_in()
        tu.verify_no_other_packets(self)

    def wait_taken_in(self) -> None:
        """Waits until the switch has started processing every frame sent so
        far; here a no-op (the program's counters are not known here)."""

    def receive(self, port: Optional[int] = None, timeout: Optional[float] = None,
                exp=None) -> Optional[tuple[int, bytes]]:
        """The next frame from `port` (any port if None), or the next one
        matching `exp`: (port, bytes), or None after `timeout`."""
        r = tu.dp_poll(self, port_number=port, timeout=timeout or ptf.ptfutils.default_timeout,
                       exp_pkt=exp)
        if isinstance(r, self.dataplane.PollSuccess):
            return r.port, bytes(r.packet)
        return None

    def receive_n(self, port: int, n: int, timeout: Optional[float] = None) -> list[bytes]:
        """Up to `n` frames from `port`, waiting at most `timeout` s in all."""
        deadline = time.monotonic() + (timeout or ptf.ptfutils.default_timeout)
        out: list[bytes] = []
        while len(out) < n:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            got = self.receive(port, left)
            if got is None:
                break
            out.append(got[1])
        return out

    def wait_until(self, cond: Callable[[], bool], timeout: float, step: float = 0.05,
                   what: str = "condition") -> None:
        deadline = time.monotonic() + timeout
        while not cond():
            if time.monotonic() > deadline:
                self.fail(f"timed out after {timeout}s waiting for {what}")
            time.sleep(step)

    # ----- the run-time (Thrift) server: queues --------------------------------------

    def runtime(self):
        """BMv2's run-time API client (p4scope's switch serves the same)."""
        if self._runtime is None:
            from p4scope.control.switch_cli.client import connect
            host, port = self.params.thrift_host_port
            self._runtime = connect(host, port, timeout_s=10)
        return self._runtime

    def set_queue(self, port: int, rate_pps: Optional[int] = None,
                  depth: Optional[int] = None) -> None:
        """Rate (packets/s) and depth (packets) of `port`'s egress queue, as
        simple_switch_CLI's set_queue_rate / set_queue_depth; reset after
        the test (no rate limit, depth 64)."""
        rt = self.runtime()
        self._queues.add(port)
        if depth is not None:
            self.assertEqual(rt.sswitch.set_egress_queue_depth(port, depth), 0,
                             f"set_egress_queue_depth({port}, {depth}) refused")
        if rate_pps is not None:
            self.assertEqual(rt.sswitch.set_egress_queue_rate(port, rate_pps), 0,
                             f"set_egress_queue_rate({port}, {rate_pps}) refused")

    def _reset_queues(self) -> list[str]:
        problems = []
        for port in sorted(self._queues):
            try:
                rt = self.runtime()
                rt.sswitch.set_egress_queue_rate(port, 0)
                rt.sswitch.set_egress_queue_depth(port, BMV2_QUEUE_DEPTH)
            except Exception as e:  # noqa: BLE001 - reported as a cleanup problem
                problems.append(f"queue of port {port} not reset: {e}")
        self._queues.clear()
        return problems

