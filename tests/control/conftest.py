"""Fixtures: the p4src programs compiled once, and an in-process switch
(p4scope's Device + gRPC server on a free loopback port) that the
controller library drives over real P4Runtime.

`bench.send(port, frame)` runs frames through the engine and returns the
frames that left (port, bytes); frames sent in one call arrive at the same
instant, so a batch towards one port builds a queue (depths 0, 1, 2, ...).
"""

from __future__ import annotations

from pathlib import Path

import pytest


from p4scope.control import Pipeline, Switch  # noqa: E402
from p4scope.experiments.testbed import compile_pipeline  # noqa: E402
from p4scope.switch.device import Device, DeviceOptions  # noqa: E402
from p4scope.switch.p4runtime.server import make_server  # noqa: E402

ROOT = Path(__file__).parents[2]
CPU_PORT = 255


@pytest.fixture(scope="session")
def dut_pipeline() -> Pipeline:
    return compile_pipeline(ROOT / "p4src" / "dut.p4")


@pytest.fixture(scope="session")
def tap_pipeline() -> Pipeline:
    return compile_pipeline(ROOT / "p4src" / "tap.p4")


class Bench:
    def __init__(self, device: Device, server, port: int):
        self.device = device
        self.server = server
        self.address = f"127.0.0.1:{port}"
        self.out: list[tuple[int, bytes]] = []
        device.transmit = lambda p, d: self.out.append((p, bytes(d)))

    def send(self, port: int, *frames: bytes) -> list[tuple[int, bytes]]:
        return self.send_many([(port, f) for f in frames])

    def send_many(self, batch: list[tuple[int, bytes]]) -> list[tuple[int, bytes]]:
        start = len(self.out)
        self.device.receive(batch)
        return self.out[start:]

    @property
    def engine(self):
        return self.device.dataplane.raw


@pytest.fixture
def bench():
    dev = Device(DeviceOptions(device_id=0, cpu_port=CPU_PORT))
    dev.start()
    server, port = make_server(dev, "127.0.0.1:0", max_workers=16)
    b = Bench(dev, server, port)
    yield b
    server.stop(None)
    dev.stop()


def _connect(bench: Bench, pipeline: Pipeline):
    sw = Switch.connect(bench.address, pipeline=pipeline)
    return sw


@pytest.fixture
def dut(bench, dut_pipeline):
    """A Switch (primary controller) running the reference DUT."""
    sw = _connect(bench, dut_pipeline)
    yield sw
    sw.close()


@pytest.fixture
def tap_sw(bench, tap_pipeline):
    sw = _connect(bench, tap_pipeline)
    yield sw
    sw.close()
