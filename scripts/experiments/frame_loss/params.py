"""Frame loss at 100 % of line rate per frame size (seed 000, Tolly's
Tables 1 and 2): the 19 frame sizes 64..9216 B, on 32 ports in port pairs
and in a full mesh (RFC 2889), and on 6 ports in port pairs."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..params import MAX_PORT, ParamError, check_int, check_number, check_sizes

TOLLY_SIZES = (64, 82, 100, 118, 128, 146, 164, 182, 200, 218, 236, 256, 512, 1024, 1280, 1518,
               2176, 4096, 9216)
SCENARIOS = {
    "pairs32": "RFC 2544, 32 ports in port pairs (1-2, 3-4, ...), both ways, layer 2",
    "pairs32-l3": "RFC 2544, 32 ports in port pairs, both ways, layer 3 (routed)",
    "mesh32": "RFC 2889, 32 ports in a full mesh, layer 2",
    "pairs6": "RFC 2544, 6 ports in port pairs (1-2, 3-4, 5-6), both ways",
}


@dataclass(frozen=True)
class FrameLossParams:
    """sizes: frame sizes (FCS included); scenarios: which of SCENARIOS;
    load_pct: what every port offers (Tolly: 100); trial_frames: frames each
    port sends per trial; rate_bps: the ports' line rate."""

    sizes: tuple[int, ...] = TOLLY_SIZES
    scenarios: tuple[str, ...] = tuple(SCENARIOS)
    load_pct: float = 100.0
    trial_frames: int = 10_000
    rate_bps: float = 100e9

    def check(self) -> "FrameLossParams":
        check_sizes(self.sizes, "--sizes")
        if not self.scenarios:
            raise ParamError("--scenarios: none")
        for sc in self.scenarios:
            scenario_ports(sc)
        check_number(self.load_pct, 0.0, 100.0, "--load-pct", above=True, unit="%")
        check_int(self.trial_frames, 100, 10_000_000, "--trial-frames")
        return self


_SCENARIO = re.compile(r"(pairs|mesh)(\d+)(-l3)?")


def scenario_ports(name: str) -> tuple[str, list[int]]:
    """(pairs | mesh, the ports) of a scenario: pairsN (N even: ports 1..N
    in pairs 1-2, 3-4, ...) or meshN (ports 1..N in a full mesh), with
    `-l3` routed instead of bridged."""
    m = _SCENARIO.fullmatch(name)
    n = int(m.group(2)) if m else 0
    if not m or not 2 <= n <= MAX_PORT or (m.group(1) == "pairs" and n % 2):
        raise ParamError(f"--scenarios: {name}: pairsN (N even) or meshN, N in 2..{MAX_PORT}, "
                         f"-l3 for layer 3 (Tolly's: {', '.join(SCENARIOS)})")
    return m.group(1), list(range(1, n + 1))


def routed(name: str) -> bool:
    return name.endswith("-l3")


def describe(name: str) -> str:
    kind, ports = scenario_ports(name)
    layer = "layer 3 (routed)" if routed(name) else "layer 2"
    return SCENARIOS.get(name) or (
        f"RFC 2889, {len(ports)} ports in a full mesh, {layer}" if kind == "mesh"
        else f"RFC 2544, {len(ports)} ports in port pairs, both ways, {layer}")
