"""Helpers of the run-time API tests: a switch with the Thrift server, and
the CLI driving it in-process (commands in, printed text out)."""

from __future__ import annotations

import io

import pytest

from p4scope.control.switch_cli.client import connect
from p4scope.control.switch_cli.program import load_program
from p4scope.control.switch_cli.shell import SwitchShell
from p4scope.switch.device import Device, DeviceOptions
from p4scope.switch.thrift.handler import PortsView, RuntimeApi
from p4scope.switch.thrift.server import RuntimeServer

import sw_program as program

CPU_PORT = program.CPU_PORT


class CliSwitch:
    """A Device running basic.p4's JSON (no P4Info), served on a free port."""

    def __init__(self, device: Device, ports=()):
        self.device = device
        self.sent: list[tuple[int, bytes]] = []
        device.transmit = lambda p, d: self.sent.append((p, d))
        self.api = RuntimeApi(device, ports=PortsView(list=lambda: list(ports)))
        self.server = RuntimeServer(self.api, "127.0.0.1", 0)
        self.port = self.server.start()
        self.clients = connect("127.0.0.1", self.port)

    def cli(self, commands: str) -> str:
        """Runs CLI commands (one per line); returns what the CLI printed."""
        out = io.StringIO()
        prog = load_program(self.clients.standard.bm_get_config())
        shell = SwitchShell(self.clients, prog, stdin=io.StringIO(commands), stdout=out)
        shell.cmdloop()
        self.last_errors = shell.errors
        return out.getvalue()

    def inject(self, port: int, data: bytes) -> list[tuple[int, bytes]]:
        self.sent.clear()
        self.device.receive([(port, data)])
        return list(self.sent)

    def close(self) -> None:
        self.clients.close()
        self.server.stop()
        self.device.stop()


@pytest.fixture
def cli_switch():
    dev = Device(DeviceOptions(device_id=0, cpu_port=CPU_PORT))
    dev.load_json(program.json_text())
    r = CliSwitch(dev, ports=[(1, "veth1", True), (2, "veth3", True)])
    yield r
    r.close()


@pytest.fixture
def cli_switch_p4rt(switch):
    """The run-time server over the P4Runtime test switch (conftest `switch`)."""
    r = CliSwitch(switch.device)
    switch.device.transmit = lambda p, d: r.sent.append((p, d))
    yield r
    r.clients.close()
    r.server.stop()
