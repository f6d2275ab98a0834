"""p4scope's P4Runtime controller: a library and apps.

    from p4scope.control import Pipeline, Switch
    sw = Switch.connect("127.0.0.1:9559", pipeline=Pipeline.from_build("dut"))
    sw.table("dmac").insert({"dst_addr": "00:00:00:00:00:02"}, "forward", port=2)

Layers (each its own module): values (byte strings), schema (the P4Info,
by name with suggestions: the switch's index, p4scope.switch.p4runtime.schema),
entities (what is written and read), client (gRPC, stream, arbitration),
device (`Switch`, by name), pipeline (P4Info + BMv2 JSON), packets and
reports (frames and INT reports), apps/ (learning, routing, ACL, LAG/ECMP,
flooding, telemetry, collector), and switch_cli/ (`p4scope switch-cli`,
simple_switch_CLI's commands over BMv2's Thrift API).
"""

from .client import Client, NotPrimary, P4RuntimeClientError, WriteError
from .device import CounterValue, DigestList, PacketIn, Switch
from .entities import CloneSession, Group, Member, MulticastGroup, TableEntry
from .pipeline import Pipeline
from .schema import Schema, UnknownName

__all__ = [
    "Client", "CloneSession", "CounterValue", "DigestList", "Group", "Member", "MulticastGroup",
    "NotPrimary", "P4RuntimeClientError", "PacketIn", "Pipeline", "Schema", "Switch",
    "TableEntry", "UnknownName", "WriteError",
]
