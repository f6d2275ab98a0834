"""The RFC 2889 section of a run's report: the Xena-style summary, every
table in the seed's shape (forward pressure and errored frames with how
the engine's MACs measure them), the tests not measured yet and why, and plots
(received vs offered rate per mesh, maximum forwarding rate and broadcast
rate per size, the address learning rate), each interactive and as PNG."""

from __future__ import annotations

import pandas as pd

from .. import report as rp
from . import section_setup as setup
from . import tables as tb
from .params import address_trial_s
from .topology import MESH_NAMES

_METHOD = (
    "Rates in % are layer-1 shares of the sending ports' line rate, as the seed's tester gives "
    "them; b/s and f/s are over all sending ports. Meshes: full (every port to every other), "
    "1:N (port 1 against the others, both ways: port 1 receives N times the load), N:N (the "
    "first half of the ports against the second half, both ways). Congestion control: ports 1 "
    "and 2 send at 100 %, port 1 half to port 3 (uncongested) and half to port 4, port 2 all to"
    " port 4 (150 %); it fails on head-of-line blocking (port 3 loses), and back pressure is "
    "reported when the sources were held back. The maximum forwarding rate is the highest rate "
    "received over the offered loads (full mesh, loss allowed; RFC 2889 gives it no pass/fail)."
    " Broadcast: port 1 sends broadcast frames, every other port must receive each.")
_ADDRESS_PROCEDURE = (
    "Address caching and learning (test port 1, learning port 2, monitor port 3): the test "
    "port's address is learnt first, the learning port sends one frame from each of N new "
    "addresses to the test port at the learning rate, then the test port sends one frame to "
    "each address at the same rate; a trial passes when the learning port gets every test frame "
    "and the monitor port none (an address not learnt in time is flooded).")
_ADDRESS = _ADDRESS_PROCEDURE + (
    " <b>The reference "
    "DUT learns through digests to the controller, so the learning rate measured is the "
    "controller's digest path</b>: each mac_learn_t digest the engine raises goes through the "
    "switch's digest manager and the P4Runtime stream to the controller (L2Learning), whose "
    "Write installs the smac and dmac entries; in virtual time the controller is a single "
    "server whose service time per digest is the wall-clock time it took on this machine "
    "(mean {service}), so the rate depends on the machine. The MAC table's size is the "
    "program's ({table} entries; the test port's own address takes one). {ageing}")
_AGEING = (
    "The learnt entries age in virtual time, as on a real switch whose learning app writes "
    "them with an idle timeout (here {ageing:g} s): the switch's idle-timeout sweep runs on the "
    "engine's clock every {sweep_ms:g} ms of virtual time and notifies the controller, which "
    "deletes the aged addresses (flooded again until relearnt). RFC 2889 (address caching, "
    "s. 5.7) asks for an ageing time longer than the test's duration, and the run refuses a "
    "shorter one (--ageing-s): {longest}")


def _ageing(p: dict, trials) -> str:
    """The ageing paragraph: the ageing time, and how long the longest
    address trial lasted against it."""
    from ...switch.p4runtime.idle import IdleTimeout

    ageing = float(p.get("ageing_s", 300))
    longest = "no address trial ran."
    if trials is not None and not trials.empty:
        worst = max(address_trial_s(int(n), float(fps))
                    for n, fps in zip(trials["addresses"], trials["rate_fps"]))
        aged = trials["aged"].fillna(0).sum() if "aged" in trials else 0
        longest = (f"the longest address trial here lasted {worst:.3g} s of virtual time, "
                   f"and {int(aged)} learnt address(es) aged within a trial.")
    return _AGEING.format(ageing=ageing, sweep_ms=IdleTimeout.interval_ns / 1e6, longest=longest)


_PRESSURE = (
    "Forward pressure (port 1 to port 2): the source sends at 100 % with a {ifg}-bit gap between "
    "frames instead of Ethernet's 96 ({over:.3f} % of line rate at 64 B); the sink measures the "
    "smallest gap between the frames the DUT sent, exactly (the egress's picosecond times) at "
    "the port's line rate, and the maximum utilisations are the frames' standard share of the "
    "time at the smallest gap. It fails when that gap is below 96 bits (a receive utilisation "
    "above 100 %: the DUT sends faster than the line allows); queueing and losing the excess "
    "is allowed.{dut}")
_ERRORED = (
    "Errored frames filtering (port 1 to port 2), at each offered load: valid frames of the "
    "case's size, undersize frames (60 B), oversize frames ({over} B: 4 more than the largest "
    "frame, {largest} B at the receiving port's MTU {mtu}) and frames of the case's size with "
    "a bad FCS, a quarter of the load each. The engine's ports are Ethernet MACs on the "
    "virtual wires: the receiving port counts errored frames (RMON's undersize, fragments, "
    "oversize, jabbers, FCS errors) and drops them before the parser{passing}. A load fails "
    "when an errored frame is forwarded or a valid one lost. Dribble-bit and alignment errors "
    "are bit-level and not sent (the engine's wire carries whole bytes).")


def _mac_tests(s: rp.Section, made: dict[str, pd.DataFrame], p: dict) -> None:
    """Forward pressure and errored frames filtering: how, then the tables."""
    if "rfc2889_forward_pressure" in made:
        ifg, dut = int(p.get("ifg_bits", 88)), int(p.get("dut_ifg_bits", 96))
        s.parts.append(rp.para(rp.esc(_PRESSURE.format(
            ifg=ifg, over=100.0 * 84 * 8 / (72 * 8 + ifg),
            dut=f" The DUT was set to send with a {dut}-bit gap of its own." if dut < 96
            else ""))))
        _tables(s, made, ("rfc2889_forward_pressure",))
    if "rfc2889_errored_frames" in made:
        mtu = int(p.get("dut_mtu", 1500))
        s.parts.append(rp.para(rp.esc(_ERRORED.format(
            over=mtu + 22, largest=mtu + 18, mtu=mtu,
            passing="; here it was configured to pass them to the pipeline, so errored frames "
                    "are forwarded" if p.get("pass_errored") else ""))))
        _tables(s, made, ("rfc2889_errored_frames",))


def _layout(title: str, x: str, y: str) -> dict:
    return dict(template="plotly_white", title=title, xaxis_title=x, yaxis_title=y,
                margin=dict(l=60, r=20, t=50, b=50), height=380)


def _forwarding_figs(trials: pd.DataFrame, mesh: str):
    import matplotlib.pyplot as plt
    import plotly.graph_objects as go

    t = trials[(trials["procedure"] == "forwarding") & (trials["topology"] == mesh)]
    web, (fig, ax) = go.Figure(), plt.subplots(figsize=(6.5, 3.6))
    for size, g in t.groupby("frame_size"):
        g = g.sort_values("value")
        web.add_scatter(x=g["value"], y=g["rx_pct"], mode="markers+lines", name=f"{size} B")
        ax.plot(g["value"], g["rx_pct"], "o-", label=f"{size} B")
    diag = [0, 100]
    web.add_scatter(x=diag, y=diag, mode="lines", name="no loss", line=dict(dash="dot",
                                                                           color="#999"))
    ax.plot(diag, diag, ":", color="#999", label="no loss")
    title = f"Forwarding, {MESH_NAMES[mesh]}: received vs offered rate"
    web.update_layout(**_layout(title, "Tx rate (% line rate)", "Rx rate (% line rate)"))
    ax.set_xlabel("Tx rate (% line rate)")
    ax.set_ylabel("Rx rate (% line rate)")
    ax.set_title(title)
    ax.legend(fontsize=7)
    return web, fig


def _per_size_figs(points: dict[str, pd.DataFrame], title: str):
    """% of line rate per frame size for each named series."""
    import matplotlib.pyplot as plt
    import plotly.graph_objects as go

    web, (fig, ax) = go.Figure(), plt.subplots(figsize=(6.5, 3.6))
    for name, d in points.items():
        web.add_scatter(x=d["size"], y=d["pct"], mode="markers+lines", name=name)
        ax.plot(d["size"], d["pct"], "o-", label=name)
    web.update_layout(**_layout(title, "frame size (B)", "% of line rate"))
    web.update_xaxes(type="log")
    web.update_yaxes(range=[0, 105])
    ax.set_xscale("log")
    ax.set_ylim(0, 105)
    ax.set_xlabel("frame size (B)")
    ax.set_ylabel("% of line rate")
    ax.set_title(title)
    ax.legend(fontsize=7)
    return web, fig


def _learning_figs(r: pd.DataFrame):
    import matplotlib.pyplot as plt
    import plotly.graph_objects as go

    web, (fig, ax) = go.Figure(), plt.subplots(figsize=(6.5, 3.6))
    for size, g in r.groupby("frame_size"):
        g = g.sort_values("addresses")
        web.add_scatter(x=g["addresses"], y=g["learning_rate_fps"], mode="markers+lines",
                        name=f"{size} B")
        ax.plot(g["addresses"], g["learning_rate_fps"], "o-", label=f"{size} B")
    title = "Address learning rate (the controller's digest path)"
    web.update_layout(**_layout(title, "addresses", "frames/s"))
    ax.set_xlabel("addresses")
    ax.set_ylabel("learning rate (frames/s)")
    ax.set_title(title)
    ax.legend(fontsize=7)
    return web, fig


def _tables(s: rp.Section, made: dict[str, pd.DataFrame], names: tuple[str, ...]) -> None:
    for name in names:
        if name in made:
            s.parts.append(f"<h3>{rp.esc(tb.CSV_FILES[name].split(':')[0])}</h3>")
            s.parts.append(rp.para(rp.esc(tb.CSV_FILES[name]) + f" (<code>{name}.csv</code>)"))
            s.parts.append(rp.html_table(made[name]))


def section(page: rp.Page) -> None:
    run = page.run
    results, trials = run.t.get("rfc2889_results"), run.t.get("rfc2889_trials")
    if results is None and trials is None:
        return
    p = run.meta.get("parameters", {}).get("rfc2889", {})
    rate = float(p.get("rate_bps", 100e9))
    dut = (run.meta.get("dut") or {}).get("label") or "the reference DUT in the embedded switch"
    s = page.section("rfc2889", "RFC 2889: forwarding, congestion, maximum forwarding rate, "
                     f"address handling, broadcast — DUT: {dut}")
    speed = f"{rate / 1e9:g} Gbit/s" if rate >= 1e9 else f"{rate / 1e6:g} Mbit/s"
    s.parts.append(rp.para(
        f"{p.get('ports', '?')} ports at {speed}; loss tolerance {p.get('tolerance_pct', 0):g} %, "
        f"search resolution {p.get('resolution_pct', 1):g} % of line rate"
        + (f", DUT egress shaped to {p['dut_rate_pct']:g} %" if p.get("dut_rate_pct", 100) < 100
           else "") + ". " + rp.esc(setup.method(run.meta)) + " " + rp.esc(_METHOD)))
    s.parts.append(setup.left_out(run.meta))
    later = run.meta.get("not_measured") or {}
    if later:
        s.parts.append(rp.para("Not yet measured (left out of the suite, no verdict): "
                               + "; ".join(f"<b>{rp.esc(k.replace('_', ' '))}</b>: needs "
                                           f"{rp.esc(v)}" for k, v in later.items()) + "."))
    made = tb.all_tables(results, trials)
    _tables(s, made, ("rfc2889_summary", "rfc2889_forwarding"))
    if trials is not None and "topology" in trials:
        for mesh in MESH_NAMES:
            if ((trials["procedure"] == "forwarding") & (trials["topology"] == mesh)).any():
                page.plot(s, f"rfc2889_forwarding_{mesh}", *_forwarding_figs(trials, mesh))
    _tables(s, made, ("rfc2889_throughput", "rfc2889_congestion_control",
                      "rfc2889_max_forwarding_rate"))
    _mac_tests(s, made, p)
    if results is None:
        return
    series = {}
    for test, name, col in (("max_forwarding_rate", "maximum forwarding rate (received, per "
                             "sending port)", "mfr_pct"),
                            ("broadcast", "broadcast forwarding rate (source port)",
                             "throughput_pct")):
        r = results[results["test"] == test]
        if not r.empty and col in r:
            series[name] = pd.DataFrame({"size": r["frame_size"], "pct": r[col]}).dropna()
    if series:
        page.plot(s, "rfc2889_rates", *_per_size_figs(
            series, "Maximum forwarding rate and broadcast forwarding rate"))
    addr = results[results["test"].isin(["address_caching", "address_learning"])]
    if not addr.empty and run.meta.get("mode") == "mininet":
        s.parts.append(rp.para(setup.address_note(run.meta) + rp.esc(_ADDRESS_PROCEDURE)))
    elif not addr.empty:
        service = addr["controller_service_ns"].dropna()
        s.parts.append(rp.para(_ADDRESS.format(
            service=f"{service.mean() / 1e3:.0f} us" if len(service) else "n/a",
            table=int(addr["mac_table_size"].iloc[0]),
            ageing=_ageing(p, run.t.get("rfc2889_address_trials")))))
    _tables(s, made, ("rfc2889_address_caching", "rfc2889_address_learning"))
    learning = results[results["test"] == "address_learning"]
    if not learning.empty:
        page.plot(s, "rfc2889_address_learning", *_learning_figs(learning))
    _tables(s, made, ("rfc2889_broadcast", "rfc2889_broadcast_latency"))
    setup.layer_parts(s, run)
