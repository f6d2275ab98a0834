"""What the experiments' parameters share, and their checks: numbers in
range (finite, with the option named), ports and frame sizes, frame-size
mixes, the seed, and the reference DUT's traffic-manager profiles (at
100GbE: fair and unfair). Each experiment's own parameters live in its
folder (e.g. microburst/params.py) and use these checks.

Everything a user passes is checked before any switch is started, with a
message that says what is wrong.
"""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass, field
from enum import Enum
from typing import Any, Mapping, Optional, Sequence, overload

from . import collector_port
from .linerate import FCS, GBPS_100

MIN_FRAME, MAX_FRAME = 64, 9216
MAX_PORT = 63  # the instrument measures ports 0..63 (telemetry.p4 TEL_MAX_PORTS)
EGRESS = 31

# What the options take (shown in --help). Wide enough for every switch
# buffer and ASIC setting in use, narrow enough that a run never plans for
# hours without a word.
MIB = 1 << 20
MIN_BUFFER_MB, MAX_BUFFER_MB = 0.125, 1024.0
MIN_ALPHA, MAX_ALPHA = 1 / 128, 64.0  # ASICs: powers of two, 1/128 .. 8 and more
MIN_CELL, MAX_CELL = 1, 16384  # 1: the buffer counts exact bytes
MAX_BURST_FRAMES = 100_000_000
MAX_DURATION_US = 1_000_000.0  # one second of virtual time per incast
MAX_SEED = 2**64 - 1  # the engine's seed is 64 bits
MAX_JOBS = 256  # worker processes of a run



class Mode(str, Enum):
    """Where `p4scope run` measures: the engine in virtual time, or real
    traffic through the switch in Mininet (root)."""

    virtual = "virtual"
    mininet = "mininet"


class ParamError(ValueError):
    """An experiment parameter is out of range or inconsistent."""


MODES = tuple(m.value for m in Mode)


def check_mode(mode: str) -> None:
    """--mode is one of MODES."""
    if mode not in MODES:
        raise ParamError(f"--mode {mode!r}: choose from {', '.join(MODES)}")


def mode_values(mode: str, defaults: Mapping[str, Mapping[str, Any]],
                given: Mapping[str, Any]) -> dict[str, Any]:
    """A `mode` run's parameter values: those `given` (None: not given) over
    the mode's `defaults`."""
    check_mode(mode)
    return {**defaults[mode], **{k: v for k, v in given.items() if v is not None}}


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() and abs(x) < 1e15 else f"{x:g}"


def check_number(value: Any, lo: float, hi: float, option: str, *, above: bool = False,
                 unit: str = "", where: str = "") -> None:
    """ParamError naming `option` unless `value` is a finite number in
    [lo, hi] ((lo, hi] with `above`); `where` says whose it is."""
    ok = (isinstance(value, (int, float)) and not isinstance(value, bool)
          and not (isinstance(value, float) and not math.isfinite(value))
          and (value > lo if above else value >= lo) and value <= hi)
    if not ok:
        rng = f"{'(' if above else '['}{_num(lo)}, {_num(hi)}]"
        raise ParamError(f"{option} {value}: must be a finite number in {rng}"
                         f"{' ' + unit if unit else ''}{f' ({where})' if where else ''}")


def check_int(value: Any, lo: int, hi: int, option: str, *, unit: str = "",
              where: str = "") -> None:
    """ParamError naming `option` unless `value` is an integer in lo..hi."""
    if not (isinstance(value, int) and not isinstance(value, bool) and lo <= value <= hi):
        raise ParamError(f"{option} {value}: must be an integer in {lo}..{hi}"
                         f"{' ' + unit if unit else ''}{f' ({where})' if where else ''}")


@overload
def check_rate(text: str, option: str) -> int: ...
@overload
def check_rate(text: None, option: str) -> None: ...
@overload
def check_rate(text: Optional[str], option: str) -> Optional[int]: ...


def check_rate(text: Optional[str], option: str) -> Optional[int]:
    """A line rate written as a topology writes it (100G, 10M, 2.5G, ...) in
    bit/s; None stays None; a bad value is a ParamError naming `option`."""
    from ..topologies.spec import TopologyError, parse_rate

    if text is None:
        return None
    try:
        return parse_rate(text, option)
    except TopologyError as e:
        raise ParamError(str(e)) from None


def check_seed(seed: Any) -> int:
    """The engine's and the sources' seed: 64 bits, unsigned."""
    check_int(seed, 0, MAX_SEED, "--seed")
    return seed


def ns_from_us(us: Any, option: str, *, above: bool = False) -> int:
    """A virtual-time option in microseconds as whole nanoseconds, checked
    to be a finite number in [0, MAX_DURATION_US] ((0, ...] with `above`)
    first."""
    check_number(us, 0, MAX_DURATION_US, option, above=above, unit="us")
    return round(us * 1000)


def combination_name(ports: Sequence[int]) -> str:
    """'9-14' for a run of consecutive ports, else '2,3,10,...'."""
    p = list(ports)
    if len(p) > 2 and p == list(range(p[0], p[0] + len(p))):
        return f"{p[0]}-{p[-1]}"
    return ",".join(str(x) for x in p)


def check_ports(ports: Sequence[int], egress: int, what: str) -> None:
    if len(ports) < 2:
        raise ParamError(f"{what}: an incast needs at least two ingress ports, got {list(ports)}")
    if len(set(ports)) != len(ports):
        raise ParamError(f"{what}: ingress ports repeat: {list(ports)}")
    for p in list(ports) + [egress]:
        if not 1 <= p <= MAX_PORT:
            raise ParamError(f"{what}: port {p} is outside 1..{MAX_PORT} (the instrument "
                             f"measures ports below {MAX_PORT + 1})")
    if egress in ports:
        raise ParamError(f"{what}: the egress port {egress} is also an ingress port")


def check_sizes(sizes: Sequence[int], what: str) -> None:
    if not sizes:
        raise ParamError(f"{what}: no frame sizes")
    for s in sizes:
        if not (isinstance(s, int) and MIN_FRAME <= s <= MAX_FRAME):
            raise ParamError(f"{what}: frame size {s} is outside {MIN_FRAME}..{MAX_FRAME} bytes")


@dataclass(frozen=True)
class Profile:
    """A traffic-manager profile of the reference DUT (engine TM config).

    buffer_bytes: the shared buffer; alpha: its dynamic-threshold factor;
    cell_bytes: the unit the buffer is taken in; arbitration: how the egress
    queue arbitrates between the ingress ports contending for it, as the
    engine takes it ({"mode": "fair"} is byte-fair round robin between
    ingress ports; {"mode": "groups", ...} serves groups of ingress ports
    in turn first, then the ports of a group, the unfair arbitration of
    some ASICs); extra: further engine TM settings merged in unchanged;
    ports: per-port settings (rate_bps, reserved_bytes) beyond the defaults,
    such as the collector port's (collector_port.py)."""

    name: str
    buffer_bytes: int
    alpha: float
    arbitration: dict[str, Any]
    cell_bytes: int = 1
    description: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
    ports: dict[int, dict[str, Any]] = field(default_factory=dict)

    @property
    def reserved_bytes(self) -> int:
        """Buffer the ports keep for themselves, outside the shared pool."""
        return sum(int(p.get("reserved_bytes", 0)) for p in self.ports.values())

    @property
    def shared_bytes(self) -> int:
        """The shared pool the measured queues compete for (B in the
        theory): the buffer less the ports' reserves."""
        return self.buffer_bytes - self.reserved_bytes

    def check(self) -> "Profile":
        where = f"profile {self.name}"
        check_int(self.buffer_bytes, 1, int(MAX_BUFFER_MB * MIB), "buffer_bytes (--buffer-mb)",
                  where=where)
        check_number(self.alpha, MIN_ALPHA, MAX_ALPHA, "--alpha", where=where)
        check_int(self.cell_bytes, MIN_CELL, MAX_CELL, "--cell-bytes", where=where)
        if self.shared_bytes <= 0:  # the reserves are whole cells: after --cell-bytes
            raise ParamError(f"{where}: the ports' reserves ({self.reserved_bytes} "
                             f"bytes) leave no shared buffer")
        return self

    def tm_config(self, rate_bps: float) -> dict[str, Any]:
        """The engine's traffic-manager document for this profile."""
        doc: dict[str, Any] = {
            "buffer": {"size_bytes": int(self.buffer_bytes), "alpha": self.alpha,
                       "cell_bytes": int(self.cell_bytes)},
            "defaults": {"rate_bps": int(rate_bps), "arbitration": dict(self.arbitration)},
        }
        if self.ports:
            doc["ports"] = {str(p): dict(v) for p, v in sorted(self.ports.items())}
        for k, v in self.extra.items():
            if isinstance(v, dict) and isinstance(doc.get(k), dict):
                doc[k] = {**doc[k], **v}
            else:
                doc[k] = v
        return doc

    @property
    def per_ingress_admission(self) -> bool:
        """With ingress arbitration (fair or groups) the engine admits
        frames per virtual output queue (one per ingress port)."""
        return self.arbitration.get("mode", "fifo") in ("fair", "groups")

    def footprint(self, frame_size: int) -> int:
        """Buffer bytes one frame of tester size `frame_size` takes (no FCS,
        whole cells)."""
        c = self.cell_bytes
        n = frame_size - FCS
        return -(-n // c) * c

    def ingress_group(self, port: int) -> int:
        """The arbitration group of an ingress port (each port its own group
        under fair arbitration)."""
        a = self.arbitration
        if a.get("mode") != "groups":
            return port
        if "group_size" in a:
            first = int(a.get("first_port", 0))
            return (port - first) // int(a["group_size"]) if port >= first else 100_000 + port
        for i, g in enumerate(a.get("groups", [])):
            if port in g:
                return i
        return 100_000 + port


def default_profiles(buffer_bytes: int = 16 * 1024 * 1024, alpha: float = 1.0,
                     cell_bytes: int = 256) -> dict[str, Profile]:
    """fair: byte-fair arbitration between ingress ports; unfair: ingress
    ports 1-8, 9-16, 17-24, 25-32 arbitrated as four groups first. Both a
    shared buffer with dynamic thresholds, taken in 256-byte cells (the cell
    size seed 001 reports), and the collector port fast and with a reserve
    of its own, so the instrument's reports take no shared buffer."""
    ports = {collector_port.COLLECTOR_PORT: collector_port.port_tm(GBPS_100, cell_bytes)}
    return {
        "fair": Profile("fair", buffer_bytes, alpha, {"mode": "fair"}, cell_bytes,
                        "byte-fair round robin between ingress ports", ports=ports),
        "unfair": Profile("unfair", buffer_bytes, alpha,
                          {"mode": "groups", "group_size": 8, "first_port": 1}, cell_bytes,
                          "groups of 8 ingress ports served in turn, then the ports of a group",
                          ports=ports),
    }


@dataclass(frozen=True)
class EngineOptions:
    """The engine options of a virtual-time run: the shared buffer
    (--buffer-mb), its dynamic-threshold factor (--alpha) and cell size
    (--cell-bytes) of every traffic-manager profile, and the seed."""

    buffer_mb: float = 16.0
    alpha: float = 1.0
    cell_bytes: int = 256
    seed: int = 1

    def check(self) -> "EngineOptions":
        check_number(self.buffer_mb, MIN_BUFFER_MB, MAX_BUFFER_MB, "--buffer-mb", unit="MB")
        check_seed(self.seed)
        for p in self._all().values():
            p.check()
        return self

    def _all(self) -> dict[str, Profile]:
        return default_profiles(int(self.buffer_mb * MIB), self.alpha, self.cell_bytes)

    def profiles(self, names: str) -> dict[str, Profile]:
        """The profiles `names` (comma-separated) with these options."""
        self.check()
        known = self._all()
        chosen = {}
        for n in [x.strip() for x in names.split(",") if x.strip()]:
            if n not in known:
                raise ParamError(f"--profiles: unknown profile {n!r} (known: {', '.join(known)})")
            chosen[n] = known[n]
        if not chosen:
            raise ParamError("--profiles: no profiles")
        return chosen


def check_mix_weights(mix: Sequence[tuple[int, float]]) -> None:
    """A frame-size mix's weights: finite, >= 0, with a positive total."""
    ws = [w for _, w in mix]
    if any(not (isinstance(w, (int, float)) and math.isfinite(w) and w >= 0) for w in ws) \
            or not 0 < sum(ws) < math.inf:
        raise ParamError(f"--mix: weights must be finite numbers >= 0 with a positive total, "
                         f"got {', '.join(str(w) for w in ws)}")


def parse_pairs(text: str) -> tuple[tuple[int, int], ...]:
    """--pairs: '1-2,7-8' -> ((1, 2), (7, 8)), port numbers in ASCII digits."""
    out = []
    for item in text.replace(" ", "").split(","):
        if not item:
            continue
        m = re.fullmatch(r"([0-9]+)-([0-9]+)", item)
        if m is None:
            raise ParamError(f"--pairs: expected A-B port pairs, got {item!r}")
        out.append((int(m[1]), int(m[2])))
    if not out:
        raise ParamError("--pairs: empty")
    return tuple(out)


def parse_int_list(text: str, what: str) -> tuple[int, ...]:
    """'64,128,1518' -> (64, 128, 1518)."""
    try:
        out = tuple(int(x) for x in text.replace(" ", "").split(",") if x)
    except ValueError:
        raise ParamError(f"{what}: expected comma-separated integers, got {text!r}") from None
    if not out:
        raise ParamError(f"{what}: empty list")
    return out


def parse_mix(text: str) -> tuple[tuple[int, float], ...]:
    """'64:55,78:5,576:17,1518:23' -> ((64, 55.0), ...)."""
    out = []
    for item in text.replace(" ", "").split(","):
        if not item:
            continue
        size, sep, w = item.partition(":")
        try:
            out.append((int(size), float(w) if sep else 1.0))
        except ValueError:
            raise ParamError(f"--mix: expected SIZE:WEIGHT items, got {item!r}") from None
    if not out:
        raise ParamError("--mix: empty")
    return tuple(out)


def as_dict(obj: Any) -> dict[str, Any]:
    """Parameters for run.json."""
    return asdict(obj)
