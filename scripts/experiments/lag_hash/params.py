"""Seed 002's LAG hashing test, its parameters checked before anything
starts.

The seed ran 1..12 Frametest instances between one server and one client,
each at a fixed 24 frames/s, 15 runs each with new L4 ports, over one
100GbE port and over a 4x25GbE bond hashing layer3+4. A 100G port carries
about 234 of those frames/s, so one instance is about 10.25 Gbit/s: the
default stream rate here, in jumbo frames (MTU 9000, as the seed's NICs
and bond: 9018 B with header and FCS).

On the reference DUT: the streams come from one sender port (SENDER_PORT,
fast enough for all of them: SENDER_BPS) and leave towards the client
through one port (PORT) or a LAG of members FIRST_MEMBER.. (a lag_select
group written by the controller), their rates set in the traffic manager.
Every stream has the same MACs and IPv4 addresses (one server, one
client), the server's NFS port 2049 as source and a destination port drawn
for each run, so only the L4 ports tell the streams apart.

The hash is the DUT's action selector, fixed when the program is compiled
(p4src/dut.p4: -DLAG_HASH=..., -DLAG_HASH_LAYER2_3).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from ..linerate import wire_bits
from ..params import MAX_FRAME, MIN_FRAME, ParamError, check_int, check_number

SEED_STREAMS = tuple(range(1, 13))
SEED_RUNS = 15
SEED_STREAM_GBPS = 10.25
SEED_FRAME = 9018
SEED_LAG = (4, 25.0)
SEED_PORT_GBPS = 100.0
SETUPS = ("port", "lag")
"""port: one port (the seed's 1x100Gb NIC); lag: the LAG (its 4x25Gb bond)."""
HASHES = ("crc32", "crc16", "csum16", "xor16", "identity")
"""v1model HashAlgorithm values the DUT's selector takes (crc32: as shipped)."""
FIELDS = {
    "layer3+4": "MAC and IPv4 addresses, protocol, L4 ports; the DUT as shipped",
    "layer2+3": "MAC and IPv4 addresses, protocol; no L4 ports",
}
"""The selector's key: Linux bonding's xmit_hash_policy names (the DUT keys
the MACs too; here every stream has the same ones)."""
SENDER_PORT, PORT, FIRST_MEMBER = 1, 2, 3
SENDER_BPS = 400e9
"""The sender's port: 12 seed streams (123 Gbit/s) fit on it, one frame at a time."""
MAX_STREAMS = 64
MAX_MEMBERS = 16
MAX_RUNS = 1000
MAX_GBPS = 400.0
NFS_PORT = 2049
EPHEMERAL = (32768, 60999)
"""Linux's ephemeral port range: each run's destination ports."""
MIN_WINDOW_FRAMES = 10


def streams_text(counts) -> str:
    c = list(counts)
    if len(c) > 2 and c == list(range(c[0], c[-1] + 1)):
        return f"{c[0]}-{c[-1]}"
    return ",".join(map(str, c))


def parse_streams(text: str) -> tuple[int, ...]:
    """'1-12' or '1,2,4,8' (ranges allowed in the list) -> stream counts."""
    out: list[int] = []
    for item in text.replace(" ", "").split(","):
        if not item:
            continue
        m = re.fullmatch(r"(\d+)(?:-(\d+))?", item)
        if not m:
            raise ParamError(f"--streams {text}: expected counts or ranges such as 1-12 or 1,4,8")
        a, b = int(m.group(1)), int(m.group(2) or m.group(1))
        if b < a:
            raise ParamError(f"--streams {item}: a range goes up (e.g. 1-12)")
        out += range(a, b + 1)
    if not out:
        raise ParamError("--streams: empty")
    return tuple(out)


def parse_lag(text: str) -> tuple[int, float]:
    """'4x25' -> (4 members, 25 Gbit/s each)."""
    m = re.fullmatch(r"\s*(\d+)\s*[xX]\s*([0-9.]+)\s*", text)
    if not m:
        raise ParamError(f"--lag {text}: expected MEMBERSxGBPS, e.g. 4x25")
    try:
        return int(m.group(1)), float(m.group(2))
    except ValueError:
        raise ParamError(f"--lag {text}: expected MEMBERSxGBPS, e.g. 4x25") from None


def parse_setups(text: str) -> tuple[str, ...]:
    out = tuple(x.strip() for x in text.split(",") if x.strip())
    for s in out:
        if s not in SETUPS:
            raise ParamError(f"--setups: {s!r} is not one of {', '.join(SETUPS)}")
    if not out:
        raise ParamError("--setups: none")
    if len(set(out)) != len(out):
        raise ParamError(f"--setups: {text!r} names a setup twice")
    return out


def run_seed(seed: int, streams: int, run: int) -> int:
    """The seed of one run's L4 ports: new for every (stream count, run),
    the same for the port and the LAG (they see the same flows)."""
    return int(np.random.SeedSequence([seed, streams, run]).generate_state(1, np.uint64)[0])


def run_ports(seed: int, streams: int, run: int) -> list[int]:
    """The run's destination ports, distinct, from the ephemeral range."""
    rng = np.random.default_rng(run_seed(seed, streams, run))
    lo, hi = EPHEMERAL
    return [int(x) for x in rng.choice(np.arange(lo, hi + 1), streams, replace=False)]


@dataclass(frozen=True)
class LagHashParams:
    """streams: the stream counts (cases); runs: runs per count, each with
    new L4 ports; stream_gbps: each stream's fixed layer-1 rate; frame_size:
    its frames (FCS included); members and member_gbps: the LAG; port_gbps:
    the single port; setups: which of SETUPS; hash and fields: the DUT's
    selector (compiled in); duration_us: each run's virtual time, measured
    after warmup_us (the seed: 3 s of warm-up, 20 s measured)."""

    streams: tuple[int, ...] = SEED_STREAMS
    runs: int = SEED_RUNS
    stream_gbps: float = SEED_STREAM_GBPS
    frame_size: int = SEED_FRAME
    members: int = SEED_LAG[0]
    member_gbps: float = SEED_LAG[1]
    port_gbps: float = SEED_PORT_GBPS
    setups: tuple[str, ...] = SETUPS
    hash: str = "crc32"
    fields: str = "layer3+4"
    duration_us: float = 2300.0
    warmup_us: float = 300.0

    def check(self) -> "LagHashParams":
        if not self.streams:
            raise ParamError("--streams: empty")
        for k in self.streams:
            check_int(k, 1, MAX_STREAMS, "--streams", where="streams at once")
        if len(set(self.streams)) != len(self.streams):
            raise ParamError(f"--streams {streams_text(self.streams)}: a count repeats")
        check_int(self.runs, 1, MAX_RUNS, "--runs")
        check_number(self.stream_gbps, 0.0, MAX_GBPS, "--stream-gbps", above=True, unit="Gbit/s")
        if max(self.streams) * self.stream_gbps * 1e9 > SENDER_BPS:
            raise ParamError(f"--stream-gbps {self.stream_gbps:g}: {max(self.streams)} streams "
                             f"exceed the sender's {SENDER_BPS / 1e9:g} Gbit/s")
        check_int(self.frame_size, MIN_FRAME, MAX_FRAME, "--frame-size", unit="bytes")
        if self.members < 1:
            raise ParamError(f"--lag {self.members}x{self.member_gbps:g}: a LAG with no members")
        check_int(self.members, 1, MAX_MEMBERS, "--lag", where="members")
        check_number(self.member_gbps, 0.0, MAX_GBPS, "--lag", above=True, unit="Gbit/s",
                     where="each member's rate")
        check_number(self.port_gbps, 0.0, MAX_GBPS, "--port-gbps", above=True, unit="Gbit/s")
        parse_setups(",".join(self.setups))
        if self.hash not in HASHES:
            raise ParamError(f"--hash {self.hash}: not one of {', '.join(HASHES)}")
        if self.fields not in FIELDS:
            raise ParamError(f"--hash-fields {self.fields}: not one of {', '.join(FIELDS)}")
        check_number(self.duration_us, 0.0, 100_000.0, "--duration-us", above=True, unit="us")
        check_number(self.warmup_us, 0.0, self.duration_us, "--warmup-us", unit="us",
                     where="below --duration-us")
        if self.window_ns < MIN_WINDOW_FRAMES * self.frame_period_ns:
            raise ParamError(
                f"--duration-us {self.duration_us:g}: the measured window (after --warmup-us "
                f"{self.warmup_us:g}) holds fewer than {MIN_WINDOW_FRAMES} frames of a stream "
                f"({self.frame_period_ns / 1000:.3g} us apart)")
        return self

    @property
    def stream_bps(self) -> float:
        return self.stream_gbps * 1e9

    @property
    def frame_period_ns(self) -> float:
        """Time between two frames of one stream."""
        return wire_bits(self.frame_size) * 1e9 / self.stream_bps

    @property
    def duration_ns(self) -> int:
        return round(self.duration_us * 1000)

    @property
    def warmup_ns(self) -> int:
        return round(self.warmup_us * 1000)

    @property
    def window_ns(self) -> int:
        return self.duration_ns - self.warmup_ns

    def egress(self, setup: str) -> list[int]:
        """The ports the streams may leave on."""
        return [PORT] if setup == "port" else list(range(FIRST_MEMBER, FIRST_MEMBER + self.members))

    def capacity_bps(self, setup: str) -> float:
        """One egress port's rate."""
        return (self.port_gbps if setup == "port" else self.member_gbps) * 1e9

    def label(self, setup: str) -> str:
        """'1x100G' or '4x25G LAG', as the seed names its two set-ups."""
        if setup == "port":
            return f"1x{self.port_gbps:g}G port"
        return f"{self.members}x{self.member_gbps:g}G LAG"

    @property
    def defines(self) -> dict[str, str]:
        """The DUT's -D macros for this hash (none for the DUT as shipped)."""
        d = {} if self.hash == "crc32" else {"LAG_HASH": self.hash}
        if self.fields == "layer2+3":
            d["LAG_HASH_LAYER2_3"] = "1"
        return d
