"""Which ports do what in each RFC 2889 test, and the streams they offer.

    full mesh        every port to every other (RFC 2889 s. 5.1)
    partial 1:N      port 1 against ports 2..N, both ways: port 1 receives
                     N x the offered load, the 1:N of the seed's tester
    partial N:N      the first half of the ports against the second half,
                     both ways (s. 5.2)
    congestion       ports 1 and 2 send at the offered load: port 1 half to
                     port 3 (uncongested) and half to port 4, port 2 all to
                     port 4 (congested: 150 %) (s. 5.5)
    broadcast        port 1 sends broadcast frames, every other port should
                     receive each (s. 5.10)
    address tests    test port 1, learning port 2, monitor port 3 (s. 5.7-5.8)
"""

from __future__ import annotations

from dataclasses import dataclass

from ..linerate import wire_bits
from ..tester.streams import Rate, Stream, full_mesh, partial_mesh

BROADCAST_MAC = 0xFF_FF_FF_FF_FF_FF
MESHES = ("full_mesh", "partial_mesh_1n", "partial_mesh_nn")
MESH_NAMES = {"full_mesh": "full mesh", "partial_mesh_1n": "partial mesh 1:N",
              "partial_mesh_nn": "partial mesh N:N"}


def groups(test: str, ports: list[int]) -> tuple[list[int], list[int]]:
    """A partial mesh's two groups."""
    if test == "partial_mesh_1n":
        return ports[:1], ports[1:]
    if test == "partial_mesh_nn":
        half = len(ports) // 2
        return ports[:half], ports[half:]
    raise ValueError(f"{test} is not a partial mesh")


def mesh_streams(test: str, ports: list[int], size: int, pct: float,
                 line_rate_bps: float) -> list[Stream]:
    """The streams of a forwarding test at `pct` of line rate per port."""
    if test == "full_mesh":
        return full_mesh(ports, size, pct, line_rate_bps)
    a, b = groups(test, ports)
    return partial_mesh(a, b, size, pct, line_rate_bps)


def sending_ports(streams: list[Stream]) -> int:
    """How many ports send (what a tester's per-port rates are shares of)."""
    return len({s.tx_port for s in streams})


@dataclass(frozen=True)
class CongestionPorts:
    source_a: int
    source_b: int
    uncongested: int
    congested: int


def congestion_ports(ports: list[int]) -> CongestionPorts:
    return CongestionPorts(*ports[:4])


def congestion_streams(c: CongestionPorts, size: int, pct: float,
                       line_rate_bps: float) -> list[Stream]:
    """Source A: half its load to the uncongested port, half to the
    congested one (frames alternate, the second stream one frame time
    later); source B: all to the congested port."""
    gap = round(wire_bits(size) * 1e9 / (line_rate_bps * pct / 100.0))
    return [Stream(c.source_a, c.uncongested, Rate.pct(pct / 2), size, name="A->UC"),
            Stream(c.source_a, c.congested, Rate.pct(pct / 2), size, start_ns=gap, name="A->C"),
            Stream(c.source_b, c.congested, Rate.pct(pct), size, name="B->C")]


def broadcast_stream(ports: list[int], size: int, pct: float) -> Stream:
    """Broadcast frames from the first port (to every other)."""
    return Stream(ports[0], None, Rate.pct(pct), size, name="broadcast",
                  headers={"dst_mac": BROADCAST_MAC})


@dataclass(frozen=True)
class AddressPorts:
    test: int
    learn: int
    monitor: int


def address_ports(ports: list[int]) -> AddressPorts:
    return AddressPorts(*ports[:3])
