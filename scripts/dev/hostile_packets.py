"""Hostile packets into the engine (p4scope_dataplane.Engine.process):
frames cut short in every header, headers that lie about their length, a
VLAN stack past its size, giant and empty frames, and thousands of random
ones (seeded), through probe.p4 (VLAN stack, IPv4 options, checksum) and
the reference DUT.  The engine takes each as a P4 parser error or a drop,
counts it, and goes on: a known frame afterwards is forwarded exactly as a
fresh engine forwards it.  Arguments out of range (a negative port or time)
are Python exceptions, never a panic."""

from __future__ import annotations

import random
import struct
from contextlib import contextmanager
from typing import Callable

from hostile_core import HANDLED, Area, Probe, Verdict, crashed, handled, wrong
from hostile_programs import CPU_PORT, dut_program, probe_program

NAME = "packets"
DST = b"\x00\x00\x00\x00\x00\x02"
SRC = b"\x00\x00\x00\x00\x00\x01"


def ipv4(ihl: int = 5, proto: int = 17, total: int = 0, options: bytes = b"",
         checksum: bool = True) -> bytes:
    hdr = struct.pack("!BBHHHBBH4s4s", 0x40 | ihl, 0, total or 20 + len(options) + 8, 1, 0,
                      64, proto, 0, bytes([10, 0, 0, 1]), bytes([10, 0, 0, 2])) + options
    if checksum:
        s = sum(struct.unpack(f"!{len(hdr) // 2}H", hdr[: len(hdr) // 2 * 2]))
        while s >> 16:
            s = (s & 0xFFFF) + (s >> 16)
        hdr = hdr[:10] + struct.pack("!H", ~s & 0xFFFF) + hdr[12:]
    return hdr


def eth(ether_type: int = 0x0800, dst: bytes = DST) -> bytes:
    return dst + SRC + struct.pack("!H", ether_type)


def vlan(n: int, inner: int = 0x0800) -> bytes:
    tags = b"".join(struct.pack("!HH", 5, 0x8100) for _ in range(n - 1))
    return eth(0x8100) + tags + struct.pack("!HH", 5, inner)


GOOD = eth() + ipv4() + struct.pack("!HH", 1234, 80) + b"\x00" * 26


class Subject:
    """One program in an engine, with a known frame and what a fresh
    engine makes of it."""

    def __init__(self, name: str, json_text: str, setup: Callable, control: tuple):
        import p4scope_dataplane as dp
        self.name, self.json_text, self.setup, self.control = name, json_text, setup, control
        self.engine = self._fresh(dp)
        self.expected = self._fresh(dp).process([control])
        if not self.expected:
            raise RuntimeError(f"{name}: the known frame is not forwarded by a fresh engine")

    def _fresh(self, dp):
        e = dp.Engine(self.json_text, seed=1)
        self.setup(e)
        return e


def _probe_setup(e) -> None:
    e.table_add("fwd", "forward", [int.from_bytes(DST, "big")], [2])


def _dut_setup(e) -> None:
    e.table_add("dmac", "forward", [int.from_bytes(DST, "big")], [2])


class Env:
    def __init__(self):
        self.t = 1_000
        self.subjects = {
            "probe.p4": Subject("probe.p4", probe_program().json_text, _probe_setup,
                                (1, GOOD, 0)),
            "DUT": Subject("DUT", dut_program().json_text, _dut_setup, (1, GOOD, 0)),
        }

    def clock(self) -> int:
        self.t += 1_000
        return self.t


@contextmanager
def environment(ctx):
    yield Env()


def _is_panic(e: BaseException) -> bool:
    return type(e).__name__ == "PanicException"


def frames_probe(subject: str, frames: Callable[[], list[tuple[int, bytes]]]):
    """Every frame is taken (counted in `received`), nothing raises, and the
    known frame still comes out as from a fresh engine."""
    def check(env: Env) -> Verdict:
        sub = env.subjects[subject]
        e = sub.engine
        batch = [(port, data, env.clock()) for port, data in frames()]
        before = e.stats()["received"]
        try:
            for i in range(0, len(batch), 512):
                e.process(batch[i:i + 512])
        except BaseException as x:  # noqa: BLE001 - a panic is a BaseException
            kind = "panic" if _is_panic(x) else type(x).__name__
            return (crashed if _is_panic(x) else wrong)(f"{kind}: {str(x)[:160]}")
        got = e.stats()["received"] - before
        if got != len(batch):
            return wrong(f"{got} of {len(batch)} frames counted as received")
        port, data, _ = sub.control
        after = e.process([(port, data, env.clock())])
        if [(p, d) for p, d, _ in after] != [(p, d) for p, d, _ in sub.expected]:
            return wrong(f"the known frame now gives {[(p, len(d)) for p, d, _ in after]}, "
                         f"a fresh engine {[(p, len(d)) for p, d, _ in sub.expected]}")
        return handled(f"{len(batch)} taken")
    return check


def bad_argument(subject: str, item: tuple):
    """A call with an argument out of range: a Python exception (not a
    panic), and the engine carries on."""
    def check(env: Env) -> Verdict:
        e = env.subjects[subject].engine
        try:
            e.process([item])
        except BaseException as x:  # noqa: BLE001
            if _is_panic(x):
                return crashed(f"panic: {str(x)[:160]}")
            if not isinstance(x, (OverflowError, ValueError, TypeError)):
                return wrong(f"{type(x).__name__}: {x}")
            v = frames_probe(subject, lambda: [])(env)  # and it carries on
            return handled(type(x).__name__) if v.status == HANDLED else v
        return wrong("accepted")
    return check


def _random_frames(seed: int, n: int, ports=(1, 2, 3)) -> Callable:
    def make():
        rng = random.Random(seed)
        out = []
        for _ in range(n):
            size = rng.choice((0, 1, 13, 14, 15, 33, 34, 60, 64, 128, 1500, rng.randrange(2000)))
            out.append((rng.choice(ports), rng.randbytes(size)))
        return out
    return make


def _mutated_frames(seed: int, n: int, base: bytes = GOOD, ports=(1,)) -> Callable:
    """Valid headers with bytes flipped and cut: the parser's corner cases."""
    def make():
        rng = random.Random(seed)
        out = []
        for _ in range(n):
            b = bytearray(rng.choice((base, vlan(rng.randrange(1, 5)) + ipv4(), eth() + ipv4(
                ihl=rng.randrange(16), options=rng.randbytes(rng.randrange(0, 44, 4))))))
            for _ in range(rng.randrange(1, 4)):
                b[rng.randrange(len(b))] = rng.randrange(256)
            out.append((rng.choice(ports), bytes(b[: rng.randrange(len(b) + 1)])))
        return out
    return make


def probes(fast: bool) -> list[Probe]:
    one = lambda *frames: (lambda: [(1, f) for f in frames])  # noqa: E731
    cases = [
        ("a zero-length frame", one(b"")),
        ("a 1-byte frame", one(b"\x01")),
        ("13 bytes of Ethernet", one(GOOD[:13])),
        ("Ethernet saying IPv4, nothing after", one(eth())),
        ("IPv4 cut after 10 bytes", one(eth() + ipv4()[:10])),
        ("IPv4 with IHL 15 and no options", one(eth() + ipv4(ihl=15))),
        ("IPv4 with IHL 15, options cut short", one(eth() + ipv4(ihl=15, options=b"\x01" * 20))),
        ("IPv4 with IHL 15 and all 40 option bytes", one(eth() + ipv4(ihl=15, options=b"\x01" * 40)
                                                         + b"\x00" * 8)),
        ("IPv4 with IHL 0..4", one(*[eth() + ipv4(ihl=i) + b"\x00" * 8 for i in range(5)])),
        ("IPv4 total length 0 and 65535", one(eth() + ipv4(total=0), eth() + ipv4(total=65535))),
        ("IPv4 with a bad checksum", one(eth() + ipv4(checksum=False) + b"\x00" * 8)),
        ("UDP cut after 1 byte", one(eth() + ipv4() + b"\x01")),
        ("3 VLAN tags (the stack holds 2)", one(vlan(3) + ipv4() + b"\x00" * 8)),
        ("1,000 VLAN tags", one(vlan(1000) + ipv4())),
        ("a VLAN tag cut short", one(eth(0x8100) + b"\x00\x05")),
        ("64 bytes of 0xff", one(b"\xff" * 64)),
        ("64 zero bytes", one(b"\x00" * 64)),
        ("a broadcast frame", one(eth(dst=b"\xff" * 6) + b"\x00" * 50)),
        ("a 9,216-byte frame", one(GOOD + b"\x00" * (9216 - len(GOOD)))),
        ("a 65,535-byte frame", one(GOOD + b"\x00" * (65535 - len(GOOD)))),
        ("a 1 MB frame", one(GOOD + b"\x00" * (1 << 20))),
        ("frames on ports 0, 255, 510, 511", lambda: [(p, GOOD) for p in (0, CPU_PORT, 510, 511)]),
        ("garbage on the CPU port (packet-out header)", lambda: [(CPU_PORT, b"\xff"),
                                                                (CPU_PORT, b""),
                                                                (CPU_PORT, b"\xff\xff" + GOOD)]),
    ]
    out = []
    for subject in ("probe.p4", "DUT"):
        for name, frames in cases:
            out.append(Probe(f"{subject}: {name}", frames_probe(subject, frames)))
        n = 5000 if fast else 200_000
        out.append(Probe(f"{subject}: {n:,} random frames", frames_probe(
            subject, _random_frames(1, n, (1, 2, 3, CPU_PORT)))))
        out.append(Probe(f"{subject}: {n:,} frames with bytes changed and cut", frames_probe(
            subject, _mutated_frames(2, n))))
    for name, item in [("port -1", (-1, GOOD, 1)), ("port 2**32", (2**32, GOOD, 1)),
                       ("time -5", (1, GOOD, -5)), ("time 2**64", (1, GOOD, 2**64)),
                       ("a str for the bytes", (1, "text", 1))]:
        out.append(Probe(f"probe.p4: {name}", bad_argument("probe.p4", item)))
    return out


AREA = Area(NAME, probes, environment)
