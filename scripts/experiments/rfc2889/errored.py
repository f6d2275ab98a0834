"""RFC 2889 s. 5.9, errored frames filtering: at each offered load, port 1
sends port 2 valid frames of the case's size, undersize frames (60 B),
oversize frames (4 B over the DUT's largest frame) and frames of the
case's size with a bad FCS, a quarter of the load each; the DUT's
receiving MAC must drop every errored frame and the DUT forward every
valid one. The DUT's receiving port has --dut-mtu; --pass-errored
configures it to pass errored frames to the pipeline (the test then
fails). Dribble-bit and alignment errors are bit-level and not sent: the
engine's wire carries whole bytes."""

from __future__ import annotations

import struct
from typing import Any

from ..linerate import wire_bits
from ..testbed import SWITCH_MAC, host_ip, host_mac
from ..tester import search
from ..tester.streams import Rate, Stream
from . import dut_mac
from . import verdicts
from .context import Context

UNDERSIZE = 60
KINDS = {"valid": None, "oversize": "oversize", "undersize": "undersize",
         "bad_fcs": "bad_fcs"}
"""The mix's streams, by name: what each has wrong (None: nothing)."""
HEADER_PROTO = 253  # IPv4's protocol for experiments: no transport header to parse


def max_frame(mtu: int) -> int:
    """The largest legal untagged frame (FCS included) on a port of `mtu`."""
    return mtu + 18


def oversize(mtu: int) -> int:
    return max_frame(mtu) + 4


def short_template(src: int, dst: int, routed: bool = False) -> bytes:
    """Ethernet and IPv4 headers (34 B) between the two ports' hosts: room
    for the tester's tag in a 60-byte frame."""
    dst_mac = SWITCH_MAC if routed else host_mac(dst)
    eth = dst_mac.to_bytes(6, "big") + host_mac(src).to_bytes(6, "big") + b"\x08\x00"
    ip = struct.pack("!BBHHHBBHII", 0x45, 0, 0, 0, 0x4000, 64, HEADER_PROTO, 0, host_ip(src),
                     host_ip(dst))
    return eth + ip


def streams(src: int, dst: int, size: int, pct: float, mtu: int, line_rate_bps: float,
            routed: bool = False) -> list[Stream]:
    """The mix at `pct` of line rate: a quarter each, their starts a frame
    time apart so the port sends them in turn."""
    sizes = {"valid": size, "oversize": oversize(mtu), "undersize": UNDERSIZE, "bad_fcs": size}
    out, start = [], 0.0
    for name, kind in KINDS.items():
        headers = ({"template": short_template(src, dst, routed)} if kind == "undersize"
                   else {})
        out.append(Stream(src, dst, Rate.pct(pct / len(KINDS)), sizes[name], name=name,
                          start_ns=round(start), errored=kind, headers=headers))
        start += wire_bits(sizes[name]) * 1e9 / (line_rate_bps * pct / 100.0)
    return out


def _trial(c: Context, pct: float) -> dict[str, Any]:
    src, dst = c.p.port_list[:2]
    mix = streams(src, dst, c.size, pct, c.p.dut_mtu, c.p.rate_bps,
                  getattr(c.bed, "routed", False))
    with dut_mac.also(c.bed, dut_mac.macs([src], c.p.dut_mtu, c.p.pass_errored)):
        t = c.bed.trial(mix, c.duration_ns())
    st = t.streams.set_index("name")
    row: dict[str, Any] = {}
    for name in KINDS:
        row[f"tx_{name}"] = int(st.loc[name, "tx_frames"])
        row[f"rx_{name}"] = int(st.loc[name, "rx_frames"])
    errored_rx = sum(row[f"rx_{k}"] for k in KINDS if KINDS[k])
    mac = t.info.get("mac", {}).get(src, {})
    row.update(errored_rx=errored_rx, mac_dropped=int(mac.get("dropped", 0)),
               mac_passed_errored=int(mac.get("passed_errored", 0)))
    ok = verdicts.errored_passed(row["tx_valid"], row["rx_valid"], errored_rx, c.p.tolerance_pct)
    return {"trial": t, "row": row, "passed": ok}


def errored_frames(c: Context) -> dict:
    """A trial at every offered load (highest first); the case fails if
    any trial forwarded an errored frame or lost valid ones."""
    loads = sorted(c.p.loads, reverse=True)
    rows = []
    for i, pct in enumerate(loads):
        r = _trial(c, pct)
        extra = {"topology": "errored_frames", "mtu": c.p.dut_mtu,
                 "pass_errored": c.p.pass_errored, **r["row"]}
        c.keep(search.Step("errored_frames", i, pct, r["trial"], r["passed"]), extra)
        rows.append({**r["row"], "passed": r["passed"]})
        c.tick((i + 1) / len(loads))
    result = verdicts.PASS if all(r["passed"] for r in rows) else verdicts.FAIL
    return c.result(
        topology="errored_frames", tx_pct=max(loads), mtu=c.p.dut_mtu,
        pass_errored=c.p.pass_errored, oversize_size=oversize(c.p.dut_mtu),
        undersize_size=UNDERSIZE, errored_rx=sum(r["errored_rx"] for r in rows),
        valid_tx=sum(r["tx_valid"] for r in rows), valid_rx=sum(r["rx_valid"] for r in rows),
        mac_dropped=sum(r["mac_dropped"] for r in rows), loads=len(rows),
        loads_passed=sum(r["passed"] for r in rows), result=result)
