"""SIGTERM ends the daemon within seconds whatever its P4Runtime streams are
doing. The case that used to hang: a slow controller (a StreamChannel that
never reads its packet-ins, so the switch's queue for it is full) goes
away while another controller keeps its stream open, as p4runtime-shell
does. The end of the slow stream blocked gRPC's serving thread (no RPC was
served any more), and after SIGTERM the process waited forever at exit for
the other stream's worker: only SIGKILL ended it."""

from __future__ import annotations

import queue
import signal
import subprocess
import sys
import time

import grpc
import psutil
from finsy.proto import p4r, p4r_grpc

from tests.switch import sw_program as program
from tests.fixtures.processes import live_children

PACKET_OUTS = 12_000
"""More than the switch queues for one stream (server.STREAM_QUEUE, 10,000)
plus what a receive window of 64 KiB holds."""


def _sigterm(proc: subprocess.Popen) -> tuple[float, str]:
    """SIGTERM to the daemon: how long it took to end and its stderr
    (killed, and the test failed, if it is still running after 10 s)."""
    t0 = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    try:
        _, err = proc.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        _, err = proc.communicate()
        raise AssertionError(f"SIGTERM did not end the daemon in 10 s (killed): {err}")
    return time.monotonic() - t0, err


def _start_daemon(tmp_path, python: tuple[str, ...] = ("-m", "p4scope.switch.daemon")
                  ) -> tuple[subprocess.Popen, str]:
    prog, ready = tmp_path / "basic.json", tmp_path / "ready"
    prog.write_text(program.json_text())
    proc = subprocess.Popen(
        [sys.executable, *python, "--thrift-port", "0", str(prog), "--",
         "--grpc-server-addr", "127.0.0.1:0", "--cpu-port", "255", "--ready-file", str(ready)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if ready.exists() and ready.read_text().strip():
            return proc, ready.read_text().strip()
        if proc.poll() is not None:
            raise AssertionError(f"daemon exited early: {proc.communicate()}")
        time.sleep(0.05)
    proc.kill()
    proc.communicate()
    raise AssertionError("daemon not ready in time")


class _Stream:
    """A StreamChannel fed from a queue; `read` False leaves its responses
    unread (gRPC's receive window stays at 64 KiB: no BDP probing)."""

    def __init__(self, address: str, election_id: int, read: bool):
        self.channel = grpc.insecure_channel(address, options=[("grpc.http2.bdp_probe", 0)])
        self.stub = p4r_grpc.P4RuntimeStub(self.channel)
        self.requests: queue.Queue = queue.Queue()
        self.election_id = election_id
        self.call = self.stub.StreamChannel(iter(self.requests.get, None))
        if read:
            self.reader = iter(self.call)
        self.send(arbitration=p4r.MasterArbitrationUpdate(
            device_id=0, election_id=p4r.Uint128(high=0, low=election_id)))

    def send(self, **kw) -> None:
        self.requests.put(p4r.StreamMessageRequest(**kw))

    def next_response(self) -> p4r.StreamMessageResponse:
        return next(self.reader)

    def close(self) -> None:
        self.requests.put(None)
        self.call.cancel()
        self.channel.close()


def _wait_until_idle(pid: int, timeout: float = 60.0) -> None:
    """Waits until the process has had nothing left to do for a second
    (at most 2 % of a CPU in each of two half-second windows), so that a
    slow machine is waited for as long as it needs (a fixed sleep of 2 s
    was not always enough for the 12,000 packet-outs)."""
    proc = psutil.Process(pid)

    def cpu_s() -> float:
        t = proc.cpu_times()
        return t.user + t.system

    deadline, quiet, last = time.monotonic() + timeout, 0, cpu_s()
    while quiet < 2:
        if time.monotonic() > deadline:
            raise AssertionError(f"the switch was still busy after {timeout:.0f} s")
        time.sleep(0.5)
        now = cpu_s()
        quiet = quiet + 1 if now - last <= 0.01 else 0
        last = now


def _packet_out_to_the_cpu_port(payload: bytes) -> p4r.PacketOut:
    # basic.p4 loops a packet-out to the CPU port back as a packet-in
    return p4r.PacketOut(payload=payload, metadata=[
        p4r.PacketMetadata(metadata_id=1, value=b"\xff"), p4r.PacketMetadata(metadata_id=2, value=b"\x00")])


def test_sigterm_ends_the_daemon_after_a_slow_controller_left_beside_an_open_stream(tmp_path):
    before = live_children()
    proc, addr = _start_daemon(tmp_path)
    slow = shell_like = None
    try:
        shell_like = _Stream(addr, election_id=1, read=True)
        assert shell_like.next_response().WhichOneof("update") == "arbitration"
        slow = _Stream(addr, election_id=2, read=False)
        time.sleep(0.3)  # the slow one is primary now
        slow.stub.SetForwardingPipelineConfig(p4r.SetForwardingPipelineConfigRequest(
            device_id=0, election_id=p4r.Uint128(high=0, low=2),
            action=p4r.SetForwardingPipelineConfigRequest.VERIFY_AND_COMMIT,
            config=p4r.ForwardingPipelineConfig(p4info=program.p4info(),
                                                p4_device_config=program.json_text().encode())),
            timeout=10)
        for i in range(PACKET_OUTS):
            slow.send(packet=_packet_out_to_the_cpu_port(i.to_bytes(4, "big") * 32))
        _wait_until_idle(proc.pid)  # it took them all; its queue for the slow stream is full
        slow.close()
        slow = None
        time.sleep(0.5)
        # the server still serves everyone after the slow controller left
        probe = grpc.insecure_channel(addr)
        try:
            caps = p4r_grpc.P4RuntimeStub(probe).Capabilities(p4r.CapabilitiesRequest(), timeout=5)
        finally:
            probe.close()
        assert caps.p4runtime_api_version == "1.3.0"
    finally:
        try:
            took, err = _sigterm(proc)
        finally:
            for s in (slow, shell_like):
                if s is not None:
                    s.close()
    assert proc.returncode == 0, err
    assert took < 5, f"the stop took {took:.1f} s"
    assert "stopped" in err and "messages dropped (slow controller)" in err, err
    assert live_children() - before == set()


STUCK_CAPABILITIES = """
import sys, threading
from p4scope.switch import daemon
from p4scope.switch.p4runtime.server import P4RuntimeService
P4RuntimeService.Capabilities = lambda self, request, context: threading.Event().wait()
sys.exit(daemon.main(sys.argv[1:]))
"""


def test_a_request_handler_that_never_returns_does_not_keep_the_daemon_alive(tmp_path):
    """The safety net behind the fix above: whatever gRPC handler may get
    stuck some day, a stopped daemon ends (with a warning) instead of
    waiting for it at exit."""
    before = live_children()
    proc, addr = _start_daemon(tmp_path, ("-c", STUCK_CAPABILITIES))
    channel = grpc.insecure_channel(addr)
    try:
        future = p4r_grpc.P4RuntimeStub(channel).Capabilities.future(p4r.CapabilitiesRequest())
        time.sleep(0.5)  # a worker thread is in the handler now, for good
        assert not future.done()
        took, err = _sigterm(proc)
    finally:
        channel.close()
    assert proc.returncode == 0, err
    assert took < 5, f"the stop took {took:.1f} s"
    assert "1 P4Runtime request handler(s) still running 2 s after the stop" in err, err
    assert "stopped" in err
    assert live_children() - before == set()
