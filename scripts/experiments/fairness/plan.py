"""Fairness under N:1 incast with iMIX (seed 000's Table 3 method).

Per case: N ingress ports each offer 100% line rate of the Tolly iMIX to
one egress port for `duration`; after a warm-up (the shared buffer fills
and the arbitration settles) the sinks' and the instrument's counters are
read at the start and at the end of the measurement window. From the
differences: per-stream layer-1 Gbps (Table 3), bandwidth share vs
packet-rate share, Jain's index, max/min share; and the instrument's
per-ingress shares (tel_delivered over P4Runtime) against the sinks'.

The shares a profile should give follow from its arbitration
(theory.arbitrated_shares): 1/N each when fair, group by group when not.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .. import figures as fg
from .. import theory as th
from ..linerate import WIRE_OVERHEAD, mix_frames_per_second
from ..params import Profile, combination_name
from .params import FairnessParams
from ..runner import Case

EXPERIMENT = "fairness"


@dataclass(frozen=True)
class IncastPlan:
    ingress: tuple[int, ...]
    egress: int
    profile: str
    mix: tuple[tuple[int, float], ...]
    duration_ns: int
    warmup_ns: int
    rate_bps: float
    load: float
    expected_shares: tuple[float, ...]

    @property
    def n(self) -> int:
        return len(self.ingress)

    @property
    def combination(self) -> str:
        return combination_name(self.ingress)

    @property
    def window_s(self) -> float:
        return (self.duration_ns - self.warmup_ns) / 1e9


def case_id(ports, profile: str) -> str:
    return f"{EXPERIMENT}/{len(ports)}to1-{combination_name(ports)}/imix/{profile}"


def plan(params: FairnessParams, profiles: dict[str, Profile]) -> list[Case]:
    params.check()
    cases = []
    for prof in profiles.values():
        prof.check()
        for ports in params.combinations:
            shares = th.arbitrated_shares([prof.ingress_group(p) for p in ports])
            ip = IncastPlan(tuple(ports), params.egress, prof.name, tuple(params.mix),
                            params.duration_ns, params.warmup_ns, params.rate_bps, params.load,
                            tuple(shares))
            frames = len(ports) * params.load * mix_frames_per_second(dict(params.mix),
                                                                     params.rate_bps) \
                * params.duration_ns / 1e9
            label = f"fairness {len(ports)}:1 ports {combination_name(ports)} {prof.name}"
            cases.append(Case(case_id(ports, prof.name), EXPERIMENT, label, case_params(ip),
                              weight=frames))
    return cases


def case_params(ip: IncastPlan) -> dict[str, Any]:
    """A case's parameters (stored with the case; plan_of reads them back)."""
    return {"ingress": list(ip.ingress), "egress": ip.egress, "profile": ip.profile,
            "mix": {s: w for s, w in ip.mix}, "duration_ns": ip.duration_ns,
            "warmup_ns": ip.warmup_ns, "rate_bps": ip.rate_bps, "load": ip.load,
            "expected_shares": list(ip.expected_shares)}


def plan_of(case: Case) -> IncastPlan:
    p = case.params
    return IncastPlan(tuple(p["ingress"]), p["egress"], p["profile"],
                      tuple((int(s), float(w)) for s, w in p["mix"].items()), p["duration_ns"],
                      p["warmup_ns"], p["rate_bps"], p["load"], tuple(p["expected_shares"]))


def stream_rows(case: Case, ip: IncastPlan, window: pd.DataFrame) -> pd.DataFrame:
    """Per-stream figures over the window.

    `window`: one row per stream with ingress_port, rx_frames, rx_bytes
    (frame bytes as a tester counts them, FCS included) received in the
    window, plus any totals (tx_frames, ...) to carry along."""
    w = window.set_index("ingress_port").reindex(list(ip.ingress)).reset_index()
    w[["rx_frames", "rx_bytes"]] = w[["rx_frames", "rx_bytes"]].fillna(0)
    split = fg.share_split(w["rx_bytes"] + WIRE_OVERHEAD * w["rx_frames"], w["rx_frames"])
    out = w.copy()
    out.insert(0, "case_id", case.case_id)
    out["experiment"] = EXPERIMENT
    out["profile"] = ip.profile
    out["n"] = ip.n
    out["combination"] = ip.combination
    out["egress_port"] = ip.egress
    out["window_ns"] = ip.duration_ns - ip.warmup_ns
    out["gbps_l1"] = [fg.gbps(b, f, ip.window_s) for b, f in zip(w["rx_bytes"], w["rx_frames"])]
    out["gbps_l2"] = [fg.gbps(b, f, ip.window_s, layer1=False)
                      for b, f in zip(w["rx_bytes"], w["rx_frames"])]
    out["bw_share"] = split.bandwidth
    out["pkt_share"] = split.packet_rate
    out["expected_share"] = list(ip.expected_shares)
    return out


def case_row(case: Case, ip: IncastPlan, streams: pd.DataFrame,
             instrument: pd.DataFrame | None) -> dict[str, Any]:
    """The case's row of the fairness table."""
    g = streams["gbps_l1"].to_numpy(float)
    bw = streams["bw_share"].to_numpy(float)
    pk = streams["pkt_share"].to_numpy(float)
    exp = np.asarray(ip.expected_shares, float)
    row = {
        "case_id": case.case_id, "experiment": EXPERIMENT, "profile": ip.profile, "n": ip.n,
        "combination": ip.combination, "ingress_ports": " ".join(str(p) for p in ip.ingress),
        "egress_port": ip.egress, "total_gbps_l1": float(np.sum(g)),
        "jain_bw": fg.jain_index(g), "jain_pkt": fg.jain_index(streams["rx_frames"]),
        "max_min_bw": fg.max_min_ratio(g), "max_share": float(np.max(bw)),
        "min_share": float(np.min(bw)), "max_dev_bw": fg.max_share_deviation(g),
        "max_dev_pkt": fg.max_share_deviation(streams["rx_frames"]),
        "max_pkt_minus_bw_pp": float(np.max(pk - bw) * 100),
        "expected_max_err_pp": float(np.max(np.abs(bw - exp)) * 100),
        "window_ns": ip.duration_ns - ip.warmup_ns,
    }
    row["fair_ok"] = bool(row["jain_bw"] >= 0.99 and row["max_dev_bw"] <= 0.02)
    if instrument is not None and not instrument.empty:
        row["instrument_jain_bw"] = fg.jain_index(instrument["bw_share"])
        row["instrument_share_err_pp"] = float(instrument["err_pp_bw"].abs().max())
    return row


def instrument_rows(case: Case, ip: IncastPlan, delivered: dict[int, tuple[int, int]],
                    streams: pd.DataFrame) -> pd.DataFrame:
    """The instrument's per-ingress shares over the window against the sinks'.

    `delivered`: ingress port -> (bytes, packets) the DUT's tel_delivered
    counter grew by over the window (switch bytes: no FCS). Shares are
    taken in layer-1 bytes (+24 per frame: FCS, preamble, gap), as the
    sinks' are."""
    ports = list(ip.ingress)
    b = np.array([delivered.get(p, (0, 0))[0] for p in ports], float)
    f = np.array([delivered.get(p, (0, 0))[1] for p in ports], float)
    split = fg.share_split(b + (WIRE_OVERHEAD + 4) * f, f)
    s = streams.set_index("ingress_port").reindex(ports)
    return pd.DataFrame({
        "case_id": case.case_id, "profile": ip.profile, "n": ip.n,
        "combination": ip.combination, "ingress_port": ports, "egress_port": ip.egress,
        "delivered_bytes": b.astype(np.int64), "delivered_frames": f.astype(np.int64),
        "bw_share": split.bandwidth, "pkt_share": split.packet_rate,
        "truth_bw_share": s["bw_share"].to_numpy(float),
        "truth_pkt_share": s["pkt_share"].to_numpy(float),
        "err_pp_bw": (split.bandwidth - s["bw_share"].to_numpy(float)) * 100,
        "err_pp_pkt": (split.packet_rate - s["pkt_share"].to_numpy(float)) * 100,
    })


def theory_lines(p: Profile, params: FairnessParams) -> list[dict[str, Any]]:
    """What a profile predicts for N:1 incast (run.json's theory lines)."""
    arb = p.arbitration.get("mode", "?")
    return [{"profile": p.name, "what": "per-stream share in N:1 incast",
             "formula": "1/N" if arb != "groups" else "1/(active groups × ports of the group)",
             "value": "", "unit": p.description}]
