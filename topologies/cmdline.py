"""The simple_switch_grpc command line that both switch kinds get.

p4scope's switch takes simple_switch_grpc's command line unchanged
(BMv2's targets/simple_switch_grpc/main.cpp options), so one function builds the argument vector
and only the program differs:

    simple_switch_grpc -i 1@s1-eth1 -i 2@s1-eth2 --device-id 0 --thrift-port 9090
        --log-console -L info [--pcap DIR] [EXTRA] (prog.json | --no-p4)
        -- --grpc-server-addr 127.0.0.1:50051 [--cpu-port 255] [--priority-queues N] [TARGET EXTRA]

and ``p4scope switch`` followed by the same words. Logs go to the console
because the node class sends the switch's stdout and stderr to the run's
log file; that works the same for both programs, whatever each does with
--log-file names.
"""

from __future__ import annotations

import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Sequence

BMV2_PROGRAM = "simple_switch_grpc"


@dataclass(frozen=True)
class SwitchCommand:
    ports: tuple[tuple[int, str], ...]
    """(P4 port number, interface name), in port order."""
    device_id: int
    grpc_port: int
    thrift_port: int
    program: Optional[str] = None
    """BMv2 JSON; None gives --no-p4 (the pipeline comes over P4Runtime)."""
    cpu_port: Optional[int] = None
    log_level: str = "info"
    """A BMv2 level (trace, debug, info, warn, error) or "off" for no log."""
    pcap_dir: Optional[str] = None
    priority_queues: Optional[int] = None
    grpc_host: str = "127.0.0.1"
    extra_args: tuple[str, ...] = ()
    target_args: tuple[str, ...] = ()

    @property
    def grpc_addr(self) -> str:
        return f"{self.grpc_host}:{self.grpc_port}"

    def args(self) -> list[str]:
        """Everything after the program name."""
        a: list[str] = []
        for port, iface in sorted(self.ports):
            a += ["-i", f"{port}@{iface}"]
        a += ["--device-id", str(self.device_id), "--thrift-port", str(self.thrift_port)]
        if self.log_level != "off":
            a += ["--log-console", "-L", self.log_level]
        if self.pcap_dir is not None:
            a += ["--pcap", self.pcap_dir]
        a += list(self.extra_args)
        a += [self.program] if self.program is not None else ["--no-p4"]
        a += ["--", "--grpc-server-addr", self.grpc_addr]
        if self.cpu_port is not None:
            a += ["--cpu-port", str(self.cpu_port)]
        if self.priority_queues is not None:
            a += ["--priority-queues", str(self.priority_queues)]
        a += list(self.target_args)
        return a


def p4scope_program() -> list[str]:
    """`p4scope switch`, from the same environment as this Python."""
    here = Path(sys.executable).parent / "p4scope"
    exe = str(here) if here.exists() else (shutil.which("p4scope") or "p4scope")
    return [exe, "switch"]


def bmv2_program() -> list[str]:
    return [shutil.which(BMV2_PROGRAM) or BMV2_PROGRAM]


def program_for(kind: str) -> list[str]:
    if kind == "p4scope":
        return p4scope_program()
    if kind == "bmv2":
        return bmv2_program()
    raise ValueError(f"no switch program for kind {kind!r}")


def argv(kind: str, cmd: SwitchCommand, program: Optional[Sequence[str]] = None) -> list[str]:
    """The full argument vector for a switch of `kind` (p4scope or bmv2)."""
    return [*(program if program is not None else program_for(kind)), *cmd.args()]
