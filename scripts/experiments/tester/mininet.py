"""The `mininet` testbed: one DUT switch in Mininet and a tester host per
tester port (host hN on DUT port N), real traffic in real time (root).

    with MininetTestbed([1, 2], "bridge", run_dir, line_rate_bps=100e6) as bed:
        t = bed.trial(pair(1, 2, 64, 50.0), 1_000_000_000)

The DUT (`--dut`) is the reference DUT program in `p4scope switch` or
BMv2's simple_switch_grpc, configured by the fabric controller (L2
learning, as experiments/mininet does), the Linux bridge, or any Mininet
switch class a user names as `module:Class`. The tester needs nothing of
the DUT but its ports: it sends and counts on the hosts.
A tester port may be a trunk (P4 DUTs): its host bonded over several DUT
ports, which the controller makes a LAG; with `watch_links` the controller
re-plans (the LAG's members too) when a DUT link goes down or up.

A trial, with `trial(streams, duration_ns)` as on the virtual testbed:

0. `setup_switch` (P4 DUTs): what it wrote for the last trial is taken
   out and written again (an ACL's counters start at zero), or taken out
   when the hook is gone, so a trial sees forwarding plus its own entries;
1. learning frames (RFC 2544 s. 23): a few frames from every receiving
   host, so a learning DUT knows every MAC before the trial (for the P4
   DUT the testbed waits until the controller has learnt them), then a
   short settle;
2. an analyzer (p4scope-trafgen `recv`) on every receiving host;
3. a generator (`send`) on every sending host, all at once; frames carry a
   stream id, a sequence number and a timestamp. Each trial uses fresh
   processes, so every counter starts at zero;
4. `settle_ns` after the generators end (never less than the testbed's
   own settle: software timing), the analyzers stop; what has not arrived
   by then is lost (frames still queued in the DUT are not observable).

Rates are the tester's: `line_rate_bps` is what the tester says a port is
(100 Mbit/s by default: software rates are low). A generator that sends
less than asked marks its streams `generator_short` (the tester's limit,
not the DUT's loss). Generators send past their own interface's qdisc, as
a hardware tester's port is never held back, so `link_bw_bps` (htb on
every link, `link_queue` packets each) shapes the DUT's side of each link:
a DUT whose ports are that fast.
"""

from __future__ import annotations

import importlib
import math
import secrets
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Optional, Sequence

from ...topologies import traffic
from ...topologies.spec import Topology, from_dict
from .streams import Stream
from .trafgen_trial import loss_end_from_series, trial_from_reports
from .trial import Trial

Tick = Callable[[float], None]
KINDS = ("p4scope", "bmv2", "bridge")
LEARN_ID = 65535
"""Stream id of the learning frames (no trial stream uses it)."""
MAX_PORT = 254  # 255 is the P4 DUT's CPU port
HEADER_KEYS = ("dst_mac", "src_mac", "src_ip", "dst_ip", "sport", "dport", "dscp")
HIST_US = tuple(round(m * 10 ** k, 3) for k in range(6)
                for m in (1, 1.25, 1.6, 2, 2.5, 3.15, 4, 5, 6.3, 8)) + (1e6,)
"""The analyzer's latency bins: ten per decade from 1 us to 1 s (R10), so a
percentile (a bin's upper edge) is within about 25 % of the latency."""


class DutError(ValueError):
    """A --dut that names no switch this testbed can run."""


class DutMissing(RuntimeError):
    """The DUT's software is not installed here."""


@dataclass(frozen=True)
class Dut:
    """The switch under test: `kind` p4scope, bmv2, bridge or class (then
    `cls` is the user's Mininet switch class); `name` as the user gave it."""

    name: str
    kind: str
    cls: Optional[type] = None

    @property
    def p4(self) -> bool:
        """Whether the DUT runs the reference DUT program (Thrift, P4Runtime)."""
        return self.kind in ("p4scope", "bmv2")

    @property
    def label(self) -> str:
        return {"p4scope": "the reference DUT (p4src/dut.p4) in p4scope switch",
                "bmv2": "the reference DUT (p4src/dut.p4) in BMv2 simple_switch_grpc",
                "bridge": "the Linux bridge (kernel, learning, no STP)"}.get(
            self.kind, f"Mininet switch class {self.name}")


def parse_dut(text: str) -> Dut:
    """'p4scope', 'bmv2', 'bridge' or 'module:Class' (a Mininet switch
    class, imported here); DutError says what is wrong."""
    text = (text or "").strip()
    if text in KINDS:
        return Dut(text, text)
    mod, sep, attr = text.partition(":")
    if not sep or not mod or not attr:
        raise DutError(f"--dut {text!r}: give p4scope, bmv2, bridge or module:Class "
                       "(a Mininet switch class, e.g. mininet.nodelib:LinuxBridge)")
    try:
        obj: Any = importlib.import_module(mod)
        for part in attr.split("."):
            obj = getattr(obj, part)
    except ImportError as e:
        raise DutError(f"--dut {text}: cannot import {mod}: {e}") from None
    except AttributeError:
        raise DutError(f"--dut {text}: {mod} has no {attr}") from None
    from mininet.node import Switch

    if not (isinstance(obj, type) and issubclass(obj, Switch)):
        raise DutError(f"--dut {text}: {obj!r} is not a Mininet switch class "
                       "(a subclass of mininet.node.Switch)")
    return Dut(text, "class", obj)


def check_installed(dut: Dut) -> None:
    """Raises DutMissing when the DUT (or the tester) cannot run here."""
    if dut.kind == "bmv2":
        from ..mininet.testbed import bmv2_missing

        why = bmv2_missing()
        if why:
            raise DutMissing(why)
    try:
        traffic.trafgen_path()
    except traffic.TrafficError as e:
        raise DutMissing(str(e)) from None


def host_mac(port: int) -> str:
    return f"02:00:00:00:{port >> 8:02x}:{port & 0xff:02x}"


def host_ip(port: int) -> str:
    return f"10.0.{port >> 8}.{port & 0xff}"


def check_trunks(ports: Sequence[int], trunks: Mapping[int, Sequence[int]]) -> None:
    """Each trunk is a tester port's host linked to several DUT ports (its
    own among them), none of them another host's; ValueError if not."""
    taken: dict[int, int] = {}
    for p, members in sorted(trunks.items()):
        if p not in ports:
            raise ValueError(f"trunk of port {p}: {p} is not a tester port")
        if p not in members or len(set(members)) != len(members) or not 2 <= len(members) <= 4:
            raise ValueError(f"trunk of port {p}: 2..4 distinct DUT ports, {p} among them "
                             f"(got {list(members)})")
        for m in members:
            if not 1 <= m <= MAX_PORT or (m != p and m in ports) or m in taken:
                raise ValueError(f"trunk of port {p}: DUT port {m} is not free")
            taken[m] = p


def tester_topology(ports: Sequence[int], kind: str = "bridge", link_bw_bps: Optional[float] = None,
                    link_queue: Optional[int] = None, mtu: Optional[int] = None,
                    trunks: Optional[Mapping[int, Sequence[int]]] = None,
                    trunk_hash: str = "l34") -> Topology:
    """One switch s1; host hN (10.0.0.N, 02:00:00:00:00:NN) on its port N
    for every tester port N. A port with a trunk (`trunks`: tester port ->
    its DUT ports) has its host linked to each of them and bonded over the
    links (topologies.lag, `trunk_hash` for what it sends); the reference
    DUT's controller makes them a LAG."""
    trunks = dict(trunks or {})
    check_trunks(ports, trunks)
    link: dict[str, Any] = {}
    if link_bw_bps is not None:
        link["bw"] = f"{int(link_bw_bps)}bit"
        if link_queue is not None:
            link["queue"] = int(link_queue)
    if mtu is not None:
        link["mtu"] = int(mtu)
    doc = {"name": f"tester-{len(ports)}",
           "hosts": [{"name": f"h{p}", "ip": f"{host_ip(p)}/16", "mac": host_mac(p),
                      **({"mtu": int(mtu)} if mtu is not None else {}),
                      **({"bond": trunk_hash} if p in trunks else {})} for p in ports],
           "switches": [{"name": "s1", "kind": "bridge" if kind == "class" else kind}],
           "links": [{"a": f"h{p}", "b": f"s1:{m}", **link} for p in ports
                     for m in trunks.get(p, (p,))]}
    return from_dict(doc, "tester")


def _mac_str(v: Any) -> str:
    return v if isinstance(v, str) else ":".join(f"{b:02x}" for b in int(v).to_bytes(6, "big"))


def _ip_str(v: Any) -> str:
    return v if isinstance(v, str) else ".".join(str(b) for b in int(v).to_bytes(4, "big"))


def _int_weights(mix: Sequence[tuple[int, float]]) -> dict[int, int]:
    """trafgen's iMIX takes integer weights: the mix's, scaled if need be."""
    pos = [w for _, w in mix if w > 0]
    scale = 1.0 if all(float(w).is_integer() for w in pos) else 1000.0 / max(pos)
    return {int(s): max(1, round(w * scale)) for s, w in mix if w > 0}


class _Alongside:
    """Runs `fn()` in a thread for the time of a `with` block, waits for it
    at the end and raises what it raised (None: nothing to run)."""

    def __init__(self, fn: Optional[Callable[[], Any]]):
        self.fn = fn
        self.error: Optional[BaseException] = None
        self.thread: Optional[threading.Thread] = None

    def _run(self) -> None:
        assert self.fn is not None
        try:
            self.fn()
        except BaseException as e:  # noqa: BLE001 - raised in the trial's thread
            self.error = e

    def __enter__(self) -> "_Alongside":
        if self.fn is not None:
            self.thread = threading.Thread(target=self._run, name="trial-during", daemon=True)
            self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.thread is not None:
            self.thread.join()
        if self.error is not None and exc[0] is None:
            raise self.error


class MininetTestbed:
    """Trials against one DUT switch in Mininet; see the module doc. Use as
    a context manager (or start()/stop()): everything it made is removed
    at the end, also after an error."""

    name = "mininet"

    def __init__(self, ports: Sequence[int], dut: Dut | str, run_dir: str | Path,
                 line_rate_bps: float = 100e6, *, link_bw_bps: Optional[float] = None,
                 link_queue: Optional[int] = None, mtu: Optional[int] = None,
                 dut_build: Any = None, settle_s: float = 0.1, learn_frames: int = 3,
                 learn_settle_s: float = 0.05, interval_ms: float = 10.0, short_retries: int = 2,
                 trunks: Optional[Mapping[int, Sequence[int]]] = None, watch_links: bool = False,
                 log: Callable[[str], None] = lambda s: print(s, file=sys.stderr)) -> None:
        """dut_build: the compiled reference DUT (mininet.testbed.build_dut)
        for the p4scope and bmv2 DUTs; built into run_dir/build if None.
        trunks: tester port -> the DUT ports its host is bonded over (P4
        DUTs: the controller makes them a LAG; tester_topology).
        watch_links: the controller watches the DUT's links and re-plans
        when one goes down or up (P4 DUTs; mininet.testbed.Testbed)."""
        self.ports = sorted(int(p) for p in ports)
        if not self.ports or len(set(self.ports)) != len(self.ports):
            raise ValueError("a testbed needs distinct tester ports")
        if any(not 1 <= p <= MAX_PORT for p in self.ports):
            raise ValueError(f"tester ports are 1..{MAX_PORT}")
        self.dut = parse_dut(dut) if isinstance(dut, str) else dut
        self.run_dir = Path(run_dir)
        self.line_rate_bps = float(line_rate_bps)
        self.link_bw_bps, self.link_queue, self.mtu = link_bw_bps, link_queue, mtu
        self.dut_build = dut_build
        self.settle_ns = int(settle_s * 1e9)
        self.learn_frames, self.learn_settle_s = learn_frames, learn_settle_s
        self.interval_ms = interval_ms
        self.short_retries = short_retries
        self.log = log
        self.trunks = {int(p): tuple(int(m) for m in ms) for p, ms in (trunks or {}).items()}
        if self.trunks and not self.dut.p4:
            raise ValueError(f"a trunk needs a P4 DUT (its controller makes the LAG), not "
                             f"{self.dut.name}")
        self.watch_links = watch_links
        self.topo = tester_topology(self.ports, self.dut.kind, link_bw_bps, link_queue, mtu,
                                    self.trunks)
        self._bed: Any = None  # mininet.testbed.Testbed (P4 DUTs) or topologies.run.Network
        self.switch = "s1"
        self.last: Optional[dict[str, Any]] = None
        """The last trial's streams, trafgen ids and raw reports."""
        self.setup_switch: Optional[Callable[[Any], None]] = None
        """As the virtual testbed's (P4 DUTs only): called with the
        controller's Switch before each trial, for entries a trial needs
        beyond forwarding (e.g. an ACL); None: forwarding only. The DUT is
        not reset between trials, so the hook must also have `undo(sw)`,
        which takes out what it wrote: the testbed calls it before the next
        trial, so what a trial had stays readable (counters) until then."""
        self._written: Any = None  # the hook whose entries are in the DUT

    # ----- lifecycle ----------------------------------------------------------------

    def __enter__(self) -> "MininetTestbed":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def start(self) -> "MininetTestbed":
        """Builds the network and the DUT (trial() does it when needed)."""
        if self._bed is not None:
            return self
        check_installed(self.dut)
        if self.dut.p4:
            from ..mininet.testbed import Testbed, build_dut

            build = self.dut_build or build_dut(self.run_dir / "build")
            bed: Any = Testbed(self.topo, self.run_dir / "net", build, kind=self.dut.kind,
                               watch_links=self.watch_links)
            bed.start()
            self.switch = bed.name("s1")
        else:
            from ...topologies.run import Network
            from ...topologies.spec import rename_switches

            self.switch = f"s1{secrets.token_hex(2)[:3]}"  # root-namespace names are shared
            topo = rename_switches(self.topo, {"s1": self.switch})
            classes = {self.switch: self.dut.cls} if self.dut.cls is not None else None
            bed = Network(topo, self.run_dir / "net", switch_classes=classes, log=self.log)
            bed.start()
        self._bed = bed
        return self

    def stop(self) -> None:
        if self._bed is not None:
            bed, self._bed, self._written = self._bed, None, None
            bed.stop()

    @property
    def network(self) -> Any:
        """The topologies.run.Network of the testbed (for its manifest)."""
        return self._bed.net if self.dut.p4 else self._bed

    def host(self, port: int) -> Any:
        return self._bed.host(f"h{port}")

    def iface(self, port: int) -> str:
        """The interface a tester port's host sends and listens on (its
        bond for a trunk)."""
        return getattr(self.host(port), "dev", None) or f"h{port}-eth0"

    def dut_iface(self, dut_port: int) -> str:
        """The DUT's interface of one of its ports (root namespace)."""
        return f"{self.switch}-eth{dut_port}"

    # ----- what the DUT is told -------------------------------------------------------

    def controller_switch(self) -> Any:
        """The controller's Switch (control.device) of a P4 DUT, started."""
        if not self.dut.p4:
            raise ValueError(f"the DUT's tables need a P4 DUT (p4scope or bmv2), "
                             f"not {self.dut.name}")
        self.start()
        return self._bed.fabric.switch(self.switch)

    def fabric(self) -> Any:
        """The controller's Fabric of a P4 DUT (control.fabric), started:
        its LAGs, link events and what it learnt."""
        self.controller_switch()
        return self._bed.fabric

    def forget_addresses(self) -> None:
        """RFC 2889's address reset: the DUT forgets what it learnt but the
        tester hosts' own addresses (a trial's learning frames would teach
        those again): the bridge's forwarding database is flushed, a P4
        DUT's controller takes out its learnt entries. ValueError for a
        switch class of the user's (p4scope cannot tell it)."""
        self.start()
        if self.dut.kind == "bridge":
            # the kernel's flush of dynamic entries, on this testbed's own bridge
            Path(f"/sys/class/net/{self.switch}-br/bridge/flush").write_text("1\n")
        elif self.dut.p4:
            learning = self._bed.fabric.states[self.switch].learning
            hosts = {int(host_mac(p).replace(":", ""), 16) for p in self.ports}
            with learning.lock:
                for mac in [m for m in learning.macs if m not in hosts]:
                    learning.forget(mac)
        else:
            raise ValueError(f"the DUT {self.dut.name} cannot be told to forget its addresses")

    def _setup(self) -> None:
        """Takes out what setup_switch wrote for the last trial, then has
        it write this trial's entries (see setup_switch)."""
        hook = self.setup_switch
        if hook is not None and not callable(getattr(hook, "undo", None)):
            raise ValueError("setup_switch on a Mininet DUT needs an undo(sw): the DUT keeps "
                             "its tables from trial to trial")
        if self._written is None and hook is None:
            return
        sw = self.controller_switch()
        if self._written is not None:
            written, self._written = self._written, None
            written.undo(sw)
        if hook is not None:
            hook(sw)
            self._written = hook

    def shape_ports(self, ports: Sequence[int], pct: float, size: float) -> None:
        """Limits the DUT's egress `ports` to `pct` of line rate for frames
        of `size` (Thrift set_queue_rate, in frames/s): P4 DUTs only."""
        if not self.dut.p4:
            raise ValueError(f"shaping the DUT's ports needs a P4 DUT (p4scope or bmv2), "
                             f"not {self.dut.name}")
        from ..linerate import frames_per_second

        self.start()

        pps = max(1, int(pct / 100.0 * frames_per_second(size, self.line_rate_bps)))
        for p in ports:
            self._bed.set_queue_rate("s1", p, pps)

    # ----- a trial --------------------------------------------------------------------

    def _check(self, streams: Sequence[Stream], duration_ns: int) -> None:
        if duration_ns <= 0:
            raise ValueError("a trial lasts a positive time")
        if not streams:
            raise ValueError("a trial needs at least one stream")
        if len(streams) >= LEARN_ID:
            raise ValueError(f"at most {LEARN_ID - 1} streams in a trial")
        for st in streams:
            for p in (st.tx_port, st.rx_port):
                if p is not None and p not in self.ports:
                    raise ValueError(f"stream {st.label}: port {p} is not a tester port "
                                     f"({', '.join(map(str, self.ports))})")
            if st.tx_port == st.rx_port:
                raise ValueError(f"stream {st.label}: sends to its own port")
            bad = sorted(set(st.headers) - set(HEADER_KEYS))
            if bad:
                raise ValueError(f"stream {st.label}: unknown header field(s) {', '.join(bad)} "
                                 f"(known here: {', '.join(HEADER_KEYS)})")

    def _receiving(self, streams: Sequence[Stream]) -> list[int]:
        out: set[int] = set()
        for st in streams:
            out |= {st.rx_port} if st.rx_port is not None else set(self.ports) - {st.tx_port}
        return sorted(out)

    def _tg_stream(self, st: Stream, sid: int, duration_ns: int) -> traffic.Stream:
        h = st.headers
        rx = st.rx_port
        kw: dict[str, Any] = {
            "dst": _mac_str(h["dst_mac"]) if "dst_mac" in h else
            (host_mac(rx) if rx is not None else "ff:ff:ff:ff:ff:ff"),
            "ip_dst": _ip_str(h["dst_ip"]) if "dst_ip" in h else
            (host_ip(rx) if rx is not None else "10.0.255.255"),
            "size": _int_weights(st.mix) if st.mix else st.one_size,
            "rate": st.rate.fps(self.line_rate_bps, st.mean_size),
            "start": st.start_ns / 1e9,
        }
        if "src_mac" in h:
            kw["src"] = _mac_str(h["src_mac"])
        if "src_ip" in h:
            kw["ip_src"] = _ip_str(h["src_ip"])
        for k in ("sport", "dport", "dscp"):
            if k in h:
                kw[k] = int(h[k])
        if st.frames is not None:
            kw["count"] = int(st.frames)
        else:
            kw["duration"] = max(duration_ns - st.start_ns, 1) / 1e9
        return traffic.Stream(sid, **kw)

    def _run_senders(self, jobs: dict[int, list[traffic.Stream]], timeout: float,
                     tick: Optional[Tick] = None, expect_s: float = 0.0) -> dict[int, dict]:
        """Runs one generator per sending port, all at once; their reports."""
        out: dict[int, dict] = {}
        errors: list[str] = []

        def run(port: int, sts: list[traffic.Stream]) -> None:
            try:
                out[port] = traffic.send(self.host(port), self.iface(port), sts, timeout=timeout,
                                   qdisc_bypass=True)
            except Exception as e:  # noqa: BLE001 - reported below
                errors.append(f"h{port}: {e}")

        threads = [threading.Thread(target=run, args=(p, s), daemon=True) for p, s in jobs.items()]
        t0 = time.monotonic()
        for t in threads:
            t.start()
        for t in threads:
            while t.is_alive():
                t.join(0.1)
                if tick is not None and expect_s > 0:
                    tick(min(1.0, (time.monotonic() - t0) / expect_s))
        if errors:
            raise RuntimeError("the generator failed: " + "; ".join(errors))
        return out

    def _learn(self, receiving: Sequence[int], streams: Sequence[Stream]) -> None:
        """RFC 2544 s. 23: every receiving host sends a few frames (to a
        host that sends to it), so the DUT knows where its MAC is."""
        jobs = {}
        for r in receiving:
            peer = next((s.tx_port for s in streams if s.rx_port == r), None)
            if peer is None:
                peer = next(p for p in self.ports if p != r)
            jobs[r] = [traffic.Stream(LEARN_ID, dst=host_mac(peer), ip_dst=host_ip(peer), size=64,
                                rate=1000.0, count=self.learn_frames)]
        self._run_senders(jobs, timeout=30.0)
        if self.dut.p4:
            want = {int(host_mac(r).replace(":", ""), 16) for r in receiving}
            deadline = time.monotonic() + 5.0
            while not want <= set(self._bed.fabric.learnt().get(self.switch, {})):
                if time.monotonic() > deadline:
                    raise RuntimeError("the DUT's controller did not learn the receiving hosts' "
                                       "MACs within 5 s of the learning frames")
                time.sleep(0.01)
        time.sleep(self.learn_settle_s)

    def trial(self, streams: Sequence[Stream], duration_ns: int, *, records: bool = False,
              tick: Optional[Tick] = None, settle_ns: Optional[int] = None,
              during: Optional[Callable[[], Any]] = None, listen: Sequence[int] = ()) -> Trial:
        """Offers `streams` for `duration_ns` and counts what arrives until
        `settle_ns` (at least the testbed's settle) after the generators end.
        `records` is accepted for the API's sake: trafgen keeps no per-frame
        records, so percentiles come from its histogram. `during()` runs in
        a thread from the moment the generators start (e.g. link events
        under load); the trial waits for it and raises what it raised.
        `listen`: tester ports that count what reaches them besides the
        streams' receivers (frames there are misdelivered: RFC 2889's
        monitor port).

        A trial whose generator fell short because it was stalled (trafgen
        counts the times it fell more than 5 ms behind its schedule and
        restarted it: `schedule_slips`) is run again, up to `short_retries`
        times: on a shared machine a stall now and then is the host's, not
        a limit of the generator at that rate. A generator still short is
        reported so (Trial.generator_short)."""
        self._check(streams, int(duration_ns))
        if any(p not in self.ports for p in listen):
            raise ValueError(f"listen: {sorted(set(listen) - set(self.ports))} not tester ports")
        self.start()
        for retry in range(self.short_retries + 1):
            self._setup()
            t = self._trial(streams, int(duration_ns), records, tick, settle_ns, during, listen)
            stalled = any(g.get("schedule_slips") for g in t.info["generator"].values())
            if not (t.generator_short and stalled):
                break
        t.info["retries"] = retry
        return t

    def _trial(self, streams: Sequence[Stream], duration_ns: int, records: bool,
               tick: Optional[Tick], settle_ns: Optional[int],
               during: Optional[Callable[[], Any]] = None, listen: Sequence[int] = ()) -> Trial:
        settle = max(int(settle_ns or 0), self.settle_ns)
        ids = list(range(1, len(streams) + 1))
        receiving = sorted(set(self._receiving(streams)) | set(listen))
        self._learn(receiving, streams)
        jobs: dict[int, list[traffic.Stream]] = {}
        for st, sid in zip(streams, ids):
            jobs.setdefault(st.tx_port, []).append(self._tg_stream(st, sid, int(duration_ns)))
        expect_s = max((s.start + ((s.duration or 0.0) if s.count is None
                                   else s.count / float(s.rate)))
                       for sts in jobs.values() for s in sts)
        rxs: dict[int, traffic.Receiver] = {}
        try:
            for r in receiving:
                rxs[r] = traffic.start_receiver(self.host(r), self.iface(r), interval_ms=self.interval_ms,
                                          hist_us=HIST_US)
            with _Alongside(during):
                sent = self._run_senders(jobs, timeout=expect_s + 30.0, tick=tick,
                                         expect_s=expect_s)
            time.sleep(settle / 1e9)
        finally:
            for rx in rxs.values():
                rx.stop()
        received = {r: rx.result(timeout=10.0) for r, rx in rxs.items()}
        info = {"dut": self.dut.name, "line_rate_bps": self.line_rate_bps,
                "generator": {p: {k: rep.get(k) for k in ("schedule_slips", "backpressure_waits",
                                                          "tx_pps", "elapsed_s")}
                              for p, rep in sent.items()},
                "analyzer_drops": {r: rep.get("ring", {}).get("drops", 0)
                                   for r, rep in received.items()}}
        if records:
            info["records"] = "not kept: trafgen reports counts and a latency histogram"
        self.last = {"streams": list(streams), "ids": ids, "sent": sent, "received": received}
        return trial_from_reports(streams, ids, list(sent.values()), received,
                                  self.line_rate_bps, int(duration_ns), settle, info)

    # ----- system recovery --------------------------------------------------------------

    @property
    def recovery_resolution(self) -> str:
        return f"the analyzer's {self.interval_ms:g} ms intervals"

    def recovery_ns(self, trial: Trial, reduced: Sequence[Stream], reduce_at_ns: int) -> float:
        """RFC 2544 s. 26.5 for the last trial: the longest time, over the
        `reduced` streams (which start at `reduce_at_ns`), from the
        reduction to the end of the analyzer's interval in which its last
        frame was lost (tester.trafgen_trial.loss_end_from_series)."""
        assert self.last is not None, "run a trial first"
        by_label = {s.label: sid for s, sid in zip(self.last["streams"], self.last["ids"])}
        tx = {s["id"]: s for rep in self.last["sent"].values() for s in rep.get("streams", [])}
        worst = 0.0
        for st in reduced:
            sid = by_label[st.label]
            row = trial.streams[trial.streams["stream"] == sid].iloc[0]
            rep = self.last["received"].get(st.rx_port, {})
            rx = next((s for s in rep.get("streams", []) if s["id"] == sid), None)
            t = tx.get(sid)
            if t is None or not t["tx_packets"]:
                continue
            if rx is None:
                return math.nan
            lat = float(row["lat_min_ns"]) if not math.isnan(row["lat_min_ns"]) else 0.0
            worst = max(worst, loss_end_from_series(
                rx["series_packets"], int(rep["interval_ns"]), int(rep["origin_ns"]),
                int(t["first_tx_ns"]), int(t["tx_packets"]),
                st.rate.fps(self.line_rate_bps, st.mean_size), int(row["lost"]), lat))
        return worst

    @property
    def interval_ns(self) -> int:
        return int(self.interval_ms * 1e6)
