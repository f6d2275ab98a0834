"""The suite's test parameters (ptf --test-params), read once.

The three that p4c's PTF tests take are required: grpcaddr, p4info and
config (the BMv2 JSON). The others default to what `p4scope ptf` and
p4c's base test use:

    device_id=0  election_id=1  cpu_port=255
    thrift='<grpcaddr host>:9090'   the run-time (Thrift) server, for queues
    target='unknown'                 'p4scope' or 'bmv2' (only reported)
    check_cleanup=True               after each test, read back that the
                                     autocleanup left no entry behind
"""

from __future__ import annotations

from dataclasses import dataclass

import ptf.testutils as tu

REQUIRED = ("grpcaddr", "p4info", "config")


class MissingParam(Exception):
    pass


@dataclass(frozen=True)
class SuiteParams:
    grpcaddr: str
    p4info: str
    config: str
    device_id: int = 0
    election_id: int = 1
    cpu_port: int = 255
    thrift: str = ""
    target: str = "unknown"
    check_cleanup: bool = True

    @property
    def thrift_host_port(self) -> tuple[str, int]:
        addr = self.thrift or f"{self.grpcaddr.rpartition(':')[0]}:9090"
        host, _, port = addr.rpartition(":")
        return host, int(port)


def read() -> SuiteParams:
    given = tu.test_params_get() or {}
    missing = [k for k in REQUIRED if not given.get(k)]
    if missing:
        raise MissingParam(
            f"PTF test parameter(s) {', '.join(missing)} missing: run ptf with "
            "--test-params=\"grpcaddr='127.0.0.1:9559';p4info='build/dut.p4info.txtpb';"
            "config='build/dut.json'\" (p4scope ptf passes them)")
    known = {k: given[k] for k in SuiteParams.__dataclass_fields__ if k in given}
    return SuiteParams(**known)
