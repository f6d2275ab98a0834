"""Fixtures: an in-process switch (Device + gRPC server on a free loopback
port) and a primary controller that has set basic.p4's pipeline."""

from __future__ import annotations

import pytest


from p4scope.switch.device import Device, DeviceOptions  # noqa: E402
from p4scope.switch.p4runtime.schema import P4Schema  # noqa: E402
from p4scope.switch.p4runtime.server import make_server  # noqa: E402

import sw_program as program  # noqa: E402
from sw_client import Client  # noqa: E402

CPU_PORT = program.CPU_PORT


class Running:
    def __init__(self, device: Device, server, port: int):
        self.device = device
        self.server = server
        self.address = f"127.0.0.1:{port}"
        self.sent: list[tuple[int, bytes]] = []
        device.transmit = lambda p, d: self.sent.append((p, d))

    def inject(self, port: int, data: bytes) -> None:
        self.device.receive([(port, data)])


@pytest.fixture
def switch():
    dev = Device(DeviceOptions(device_id=0, cpu_port=CPU_PORT))
    dev.start()
    server, port = make_server(dev, "127.0.0.1:0", max_workers=32)
    sw = Running(dev, server, port)
    yield sw
    server.stop(None)
    dev.stop()


@pytest.fixture
def schema() -> P4Schema:
    return P4Schema(program.p4info())


@pytest.fixture
def client_factory(switch):
    made = []

    def make(election_id=1, device_id=0, arbitrate=True):
        c = Client(switch.address, device_id=device_id, election_id=election_id)
        made.append(c)
        if arbitrate:
            c.arbitrate()
        return c

    yield make
    for c in made:
        c.close()


@pytest.fixture
def ctl(client_factory):
    """The primary controller (election id 1) with basic.p4 committed."""
    c = client_factory(1)
    c.set_pipeline(program.p4info(), program.json_text().encode())
    return c
