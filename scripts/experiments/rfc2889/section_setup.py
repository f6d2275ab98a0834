"""What the RFC 2889 report section says of the set-up a run measured on:
the DUT and how trials ran on its testbed (the embedded switch, a chain of
them, or Mininet), the tests left out there and why, what the address
tests' learning rate is on that DUT, and, through a chain, seed 003's
latency per layer with each hop's share."""

from __future__ import annotations

from typing import Any

from .. import report as rp
from ..chain_latency import seed_table
from .layers import FRAMES, LOAD_PCT, hops_shown

VIRTUAL = (
    "Each trial starts from a fresh switch (counters, queues, tables and clock reset: RFC "
    "2889's address reset too). Frames still in the switch a few frame times after the "
    "sources stop count as not forwarded, so the buffer cannot hide an overload.")
MININET = (
    "Mininet, real time: a tester host per port runs p4scope-trafgen, fresh generator and "
    "analyzer processes for every trial, after learning frames from every receiving host. The "
    "line rate is what the tester says a port is; a trial whose generator sent less than asked "
    "is marked generator-short (the tester's limit, not the DUT's loss): it does not pass, and "
    "a search where every trial fell short reports no throughput (\"not measured\"). Frames "
    "that have not arrived shortly after the generators stop count as lost; what is still "
    "queued in the DUT is not observable. Latency is from the generator's software timestamp "
    "to the analyzer's kernel receive timestamp. Address tests: before each trial the DUT "
    "forgets what it learnt (the bridge's forwarding database flushed, the reference DUT's "
    "controller taking out its entries) and the trial uses addresses never sent before; each "
    "address is its own one-frame stream.")


def _chain(meta: dict[str, Any]) -> str:
    ch = meta.get("chain") or {}
    n = ch.get("switches", "?")
    rate = ch.get("link_rate_bps")
    return (
        f"Through a chain of {n} reference DUTs in virtual time (seed 003's set-up), the tester "
        f"on the first and the last: ports {', '.join(map(str, ch.get('first_switch_ports', [])))}"
        f" on the first switch, {', '.join(map(str, ch.get('last_switch_ports', [])))} on the "
        f"last, so traffic between the two halves crosses every switch. Each switch's port "
        f"{ch.get('link_ports', {}).get('east', '?')} is linked to the next one's "
        f"{ch.get('link_ports', {}).get('west', '?')} at "
        + (f"{rate / 1e9:g} Gbit/s" if rate else "?")
        + f" (the line rate of the tester ports on one side together: the chain adds hops, not "
        f"a bottleneck) with {ch.get('link_delay_ns', 0)} ns of delay; every switch forwards on "
        f"static entries and floods over its tester ports and links. Each trial starts from "
        f"fresh switches; the settle time is the single switch's per switch crossed, and frames "
        f"still queued anywhere in the chain or on a link count as not forwarded.")


def method(meta: dict[str, Any]) -> str:
    """How the run's trials ran, for its testbed."""
    if meta.get("mode") == "mininet":
        return MININET
    if meta.get("testbed") == "chain":
        return _chain(meta)
    return VIRTUAL


def left_out(meta: dict[str, Any]) -> str:
    """The tests this run's testbed leaves out, and why (HTML)."""
    parts = []
    for key, where in (("not_in_mininet", "Not run in Mininet"),
                       ("not_through_chain", "Not run through the chain")):
        tests = meta.get(key) or {}
        if tests:
            parts.append(rp.para(f"{where}: " + "; ".join(
                f"<b>{rp.esc(k.replace('_', ' '))}</b>: {rp.esc(v)}" for k, v in tests.items())
                + "."))
    return "".join(parts)


def address_note(meta: dict[str, Any]) -> str:
    """What the address tests measure on a Mininet DUT."""
    dut = meta.get("dut") or {}
    if dut.get("name") in ("p4scope", "bmv2"):
        return ("The DUT learns through digests to its controller (the fabric's L2 learning, "
                "in real time), so the learning rate is the controller's digest path on this "
                "machine. ")
    return f"The DUT learns by itself ({rp.esc(dut.get('label', dut.get('name', '?')))}). "


def layer_parts(s: rp.Section, run: Any) -> None:
    """Through a chain: the latency per layer and the longest chain's hops."""
    rows, hops = run.t.get("rfc2889_layers"), run.t.get("rfc2889_hops")
    if rows is None or rows.empty:
        return
    table = seed_table(rows)
    s.parts.append("<h3>Latency per layer</h3>")
    worst = (f"; the tester's latency and the hops and wires added up differ by at most "
             f"{rows['hops_sum_max_diff_ns'].max():g} ns")
    s.parts.append(rp.para(
        f"Seed 003's table: chains of 1 to {int(table['layer'].max())} reference DUTs, the "
        f"tester on the first and last switch, {FRAMES} frames each way at {LOAD_PCT:g} % of "
        f"line rate per frame size, links at the line rate (<code>rfc2889_layer_latency.csv"
        f"</code>){worst}."))
    s.parts.append(rp.html_table(table))
    if hops is not None and not hops.empty:
        s.parts.append(rp.para("Each hop of the longest chain: its residence (enqueue to "
                               "first bit out, from the switch's own trace) and the wire into "
                               "it (the tester's port for hop 1, else the link before it)."))
        s.parts.append(rp.html_table(hops_shown(hops)))
