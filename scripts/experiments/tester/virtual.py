"""The `virtual` testbed: the engine's traffic sources and sinks in virtual
time, against the embedded switch (the reference DUT configured over
P4Runtime, see ../testbed.py).

Every trial starts from a fresh engine (the pipeline is sent again over
P4Runtime), so every counter, queue and clock is reset before it, as
RFC 2544 asks. The reference DUT forwards on static entries the testbed
installs for the trial's ports, so no learning frames are needed and none
is flooded. Sources stop at the trial's end; frames still in the switch
`settle_ns` later are counted as not forwarded (the virtual-time buffer
caveat: a buffer of B bytes hides an overload of d for B / (d x rate))
and reported in `Trial.queued_at_end`. The default settle time is what an uncongested switch
needs for the largest frame in flight (100 ns plus four such frames' time
on the wire), so an overload shows as loss as soon as it has queued more
than a few frames; `trial_frames` gives the trial length at which an
overload of one search step shows as a fixed number of frames.
"""

from __future__ import annotations

from typing import Any, Callable, Optional, Sequence

import numpy as np

from ..linerate import GBPS_100, frame_time_ns
from ..testbed import SWITCH_MAC, Flow, VirtualSwitch
from ..traffic import Traffic, _weights
from .search import recovery_time
from .streams import Stream
from .trial import Trial, histogram_rows, stream_rows

Tick = Callable[[float], None]


def default_settle_ns(streams: Sequence[Stream], line_rate_bps: float) -> int:
    """How long after the sources stop a frame may still arrive and count:
    100 ns plus four of the largest frames' time at line rate."""
    largest = max(max(s for s, _ in st.mix) if st.mix else st.one_size for st in streams)
    return 100 + 4 * int(frame_time_ns(largest, line_rate_bps) + 1)


def trial_frames(resolution_pct: float, shows_as: int = 50) -> int:
    """Frames per stream a trial needs so that an overload of
    `resolution_pct` of line rate leaves `shows_as` frames queued at its end
    (50 000 at 0.1 %), whatever the frame size."""
    return int(shows_as * 100.0 / resolution_pct)


HEADER_KEYS = ("dst_mac", "src_mac", "src_ip", "dst_ip", "sport", "dport", "dscp", "template",
               "vary", "macs", "tag")


class VirtualTestbed:
    """Trials against `vs` (a started VirtualSwitch) at `line_rate_bps` per
    port. `profile` (optional) replaces the switch's traffic-manager profile
    for every trial."""

    name = "virtual"

    def __init__(self, vs: Optional[VirtualSwitch], line_rate_bps: float = GBPS_100,
                 profile: Any = None, routed: bool = False):
        self.vs = vs
        """The switch under test (None: a testbed of several, its own trial())."""
        self.line_rate_bps = float(line_rate_bps)
        self.profile = profile
        self.routed = routed
        """Layer 3: frames go to the switch's router MAC and are routed on
        their IPv4 destination (else bridged on the hosts' MACs)."""
        self.last_records: Optional[dict[str, np.ndarray]] = None
        """The last trial's per-frame records (when it kept them)."""
        self.setup: Optional[Callable[[Any], object]] = None
        """Called with the engine (under the switch's lock) after each
        reset and before any frame is sent, e.g. to limit a queue's rate."""
        self.setup_switch: Optional[Callable[[Any], None]] = None
        """Called with the controller's Switch after each reset, once the
        trial's forwarding is written: table entries a trial needs beyond
        forwarding (e.g. an ACL); None: forwarding only."""

    def shape_ports(self, ports: Sequence[int], pct: float, size: float) -> None:
        """Limits the DUT's egress `ports` to `pct` of line rate (the
        traffic manager's port rate, in bit/s: the same share at any size)."""
        rate = int(self.line_rate_bps * pct / 100.0)
        ports = list(ports)
        self.setup = lambda e: [e.set_port_rate(q, rate) for q in ports]

    recovery_resolution = "one frame (per-frame records)"

    def recovery_ns(self, trial: Trial, reduced: Sequence[Stream], reduce_at_ns: int) -> float:
        """RFC 2544 s. 26.5 from the last trial's per-frame records (it must
        have kept them): over the `reduced` streams, the longest time from
        `reduce_at_ns` to the send time of a frame that was lost."""
        rec = self.last_records
        if rec is None:
            raise ValueError("recovery needs a trial with records=True")
        worst = 0.0
        for st in reduced:
            row = trial.streams[trial.streams["name"] == st.label].iloc[0]
            sid, sent = int(row["stream"]), int(row["tx_frames"])
            got = np.zeros(sent, bool)
            seq = rec["seq"][rec["stream"] == sid].astype(np.int64)
            got[seq[seq < sent]] = True
            slot = 1e9 / st.rate.fps(self.line_rate_bps, st.mean_size)
            tx = st.start_ns + np.arange(sent) * slot
            worst = max(worst, recovery_time(tx, got, reduce_at_ns))
        return worst

    def _engine_args(self, st: Stream, duration_ns: int) -> dict[str, Any]:
        kw: dict[str, Any] = dict(st.rate.engine_args())
        kw["line_rate_bps"] = self.line_rate_bps
        if st.mix:
            kw["weights"] = _weights(dict(st.mix))
        else:
            kw["size"] = st.one_size
        kw["start_ns"] = int(st.start_ns)
        if st.frames is not None:
            kw["frames"] = int(st.frames)
        else:
            kw["duration_ns"] = max(int(duration_ns) - int(st.start_ns), 0)
        kw["name"] = st.label
        if self.routed:
            kw["dst_mac"] = SWITCH_MAC
        if st.ifg_bits != 96:
            kw["ifg_bits"] = int(st.ifg_bits)
        if st.errored == "bad_fcs":
            kw["bad_fcs"] = True
        for k, v in st.headers.items():
            if k not in HEADER_KEYS:
                raise ValueError(f"stream {st.label}: unknown header field {k!r} "
                                 f"(known: {', '.join(HEADER_KEYS)})")
            kw[k] = v
        return kw

    def trial(self, streams: Sequence[Stream], duration_ns: int, *, records: bool = False,
              tick: Optional[Tick] = None, settle_ns: Optional[int] = None) -> Trial:
        """Offers `streams` for `duration_ns` of virtual time and counts what
        arrives until `settle_ns` after that. `records`: keep a record per
        received frame (latency percentiles, duplicated vs reordered);
        `settle_ns` defaults to `default_settle_ns(streams)`."""
        if duration_ns <= 0:
            raise ValueError("a trial lasts a positive time")
        if not streams:
            raise ValueError("a trial needs at least one stream")
        settle = (default_settle_ns(streams, self.line_rate_bps) if settle_ns is None
                  else int(settle_ns))
        vs = self.vs
        if vs is None:
            raise ValueError(f"the {self.name} testbed has several switches: its own trial() runs")
        flows = sorted({(s.tx_port, s.rx_port) for s in streams if s.rx_port is not None})
        vs.setup_switch = self.setup_switch
        vs.reset(self.profile, [Flow(a, b, self.routed) for a, b in flows], {})
        tr = Traffic(vs)
        if self.setup is not None:
            with vs.locked() as e:
                self.setup(e)
        ids = [tr.add(s.tx_port, s.rx_port if s.rx_port is not None else s.tx_port,
                      **self._engine_args(s, duration_ns)) for s in streams]
        with vs.locked() as e:
            e.record_rx(records)
        tr.run_until(int(duration_ns), tick)
        with vs.locked() as e:
            e.run(until_ns=int(duration_ns) + settle, drain=False)
            queued = sum(int(q["pkts"]) for q in e.tm_queue_stats())
            rows = e.stream_stats()
            ports = {int(r["port"]): r["min_gap_bits"] for r in e.port_rx_stats()}
            mac = {int(p): dict(s) for p, s in e.port_mac_stats().items()}
            hist = {sid: e.latency_histogram(sid) for sid in ids}
            recs = ({k: np.asarray(v) for k, v in e.rx_records().items()} if records else None)
            e.record_rx(False)
        self.last_records = recs
        table = stream_rows(streams, rows, ids, self.line_rate_bps, int(duration_ns), recs)
        return Trial(table, int(duration_ns), settle, self.line_rate_bps, queued,
                     histogram_rows(ids, [s.label for s in streams], hist),
                     {"testbed": self.name, "digest": tr.digest(), "min_gap_bits": ports,
                      "mac": mac})
