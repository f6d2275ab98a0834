"""What a traffic-manager profile predicts for microbursts (run.json's
theory lines): the frames a 2:1 burst leaves buffered."""

from __future__ import annotations

from typing import Any

from .. import theory
from ..params import Profile


def theory_lines(p: Profile, params: Any) -> list[dict[str, Any]]:
    B, a = p.shared_bytes, p.alpha
    voqs = 2 if p.per_ingress_admission else 1
    out = []
    for size in (64, 1518, 9216):
        fpb = p.footprint(size)
        k = theory.dt_admitted_frames(B, a, fpb, voqs=voqs)
        out.append({"profile": p.name, "what": f"2:1 burst of {size} B frames: buffered",
                    "formula": f"frames of c = {fpb} B ({size} − 4 B FCS in {p.cell_bytes} B "
                               "cells) under the threshold",
                    "value": k, "unit": f"frames = {k * size / 2**20:.2f} MB"})
    return out
