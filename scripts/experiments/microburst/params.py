"""Microburst parameters as in the seed reports: 2:1 (seed 000, Table 4),
the 18 frame sizes 64..9216 B and two port combinations, Test 1 = ports 1
and 2 -> 31, Test 2 = ports 1 and 9 -> 31; 4:1 (seed 001, Figure 10),
192..9216 B, ports 1, 2, 3, 9 -> 31; at 100GbE."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from ..linerate import GBPS_100
from ..params import (EGRESS, MAX_BURST_FRAMES, ParamError, check_int, check_number,
                      check_ports, check_sizes)

TABLE4_SIZES = (64, 82, 100, 118, 128, 146, 164, 182, 200, 218, 236, 256, 512, 1024, 1518,
                2048, 4096, 9216)
ESG_4TO1_SIZES = (192, 512, 1024, 1518, 2048, 4096, 9216)

# seed 000, microburst: (name, ingress ports)
MICROBURST_2TO1 = (("Test 1", (1, 2)), ("Test 2", (1, 9)))
MICROBURST_4TO1 = (("Test 1", (1, 2, 3, 9)),)


@dataclass(frozen=True)
class MicroburstParams:
    sizes_2to1: tuple[int, ...] = TABLE4_SIZES
    sizes_4to1: tuple[int, ...] = ESG_4TO1_SIZES
    combos_2to1: tuple[tuple[str, tuple[int, ...]], ...] = MICROBURST_2TO1
    combos_4to1: tuple[tuple[str, tuple[int, ...]], ...] = MICROBURST_4TO1
    egress: int = EGRESS
    burst_frames: Optional[int] = None  # None: from the configured buffer, with margin
    margin: float = 1.5
    rate_bps: float = GBPS_100

    def check(self) -> "MicroburstParams":
        if not self.sizes_2to1 and not self.sizes_4to1:
            raise ParamError("microburst: no frame sizes for either scenario")
        if self.sizes_2to1:
            check_sizes(self.sizes_2to1, "--sizes (microburst 2:1)")
        if self.sizes_4to1:
            check_sizes(self.sizes_4to1, "--sizes-4to1 (microburst 4:1)")
        for name, ports in self.combos_2to1:
            check_ports(ports, self.egress, f"microburst 2:1 {name}")
            if len(ports) != 2:
                raise ParamError(f"microburst 2:1 {name}: needs two ingress ports")
        for name, ports in self.combos_4to1:
            check_ports(ports, self.egress, f"microburst 4:1 {name}")
            if len(ports) != 4:
                raise ParamError(f"microburst 4:1 {name}: needs four ingress ports")
        if self.burst_frames is not None:
            check_int(self.burst_frames, 1, MAX_BURST_FRAMES, "--burst-frames")
        check_number(self.margin, 1.0, 100.0, "margin", where="bursts longer than the buffer")
        check_number(self.rate_bps, 0, 1e12, "rate_bps", above=True, where="the line rate")
        return self
