"""The telemetry collector's port on the embedded switch, and the traffic-
manager settings that keep the instrument's reports out of the buffer it
measures.

A report is an egress-to-egress clone (telemetry.p4) queued on the
collector port with the whole reported frame: it is cut to the snap length
only at that port's egress, so while it waits it holds up to a 9216-byte
frame's buffer. Taken from the shared pool, that space would lower the
dynamic threshold of the queue being measured (the instrument would shrink
what it measures). Two settings make reports take none of it:

* rate: the instrument sends at most one report per dequeue of a measured
  port (one clone per packet), and a port at line rate dequeues at most one
  minimum frame per wire time (64 B: 60 B + 24 B preamble, gap and FCS, 84
  wire bytes). A report is at most REPORT_MAX_BYTES + 24 wire bytes; the
  collector port runs fast enough to send one in less time than that frame
  takes, so every report leaves before the next is made and the port's
  queue never holds more than one (400 Gb/s: 4.5 ns per report, 6.7 ns per
  64 B frame at 100 Gb/s).
* reserve: the port keeps the buffer of one clone of the largest frame for
  itself, so that one report is always held in reserved space.

The reserve is no longer part of the shared pool: the theory of the
measured queue uses the buffer less the reserves (Profile.shared_bytes).
Each case checks afterwards that the collector queue stayed within its
reserve (`check_reserve`).
"""

from __future__ import annotations

import math
from typing import Any, Iterable, Mapping

COLLECTOR_PORT = 62
SNAP_BYTES = 64
# int_report.p4 with report_collector's outer headers: Ethernet 14 + IPv4 20
# + UDP 8 + group 8 + individual 4 + main 8 + baseline metadata 28 + the
# DOMAIN_QUEUE block 48, then up to SNAP_BYTES of the reported frame
REPORT_MAX_BYTES = 14 + 20 + 8 + 8 + 4 + 8 + 28 + 48 + SNAP_BYTES
WIRE_OVERHEAD = 24  # the engine's default: preamble + SFD 8, gap 12, FCS 4
MIN_FRAME_BYTES = 60  # a 64-byte frame without its FCS
MAX_FRAME_BYTES = 9212  # a 9216-byte frame without its FCS
RATE_BPS = 400e9


class ReportsTookSharedBuffer(RuntimeError):
    """The collector port held more than its reserve: reports competed with
    the measured queue for shared buffer."""


def min_rate_bps(line_rate_bps: float) -> float:
    """The slowest collector port that sends one report per minimum frame
    of a port at `line_rate_bps`."""
    return line_rate_bps * (REPORT_MAX_BYTES + WIRE_OVERHEAD) / (MIN_FRAME_BYTES + WIRE_OVERHEAD)


def reserve_bytes(cell_bytes: int) -> int:
    """Buffer one clone of the largest frame takes, in whole cells."""
    c = max(1, int(cell_bytes))
    return math.ceil(MAX_FRAME_BYTES / c) * c


def port_tm(line_rate_bps: float, cell_bytes: int) -> dict[str, Any]:
    """The collector port's engine TM settings (a `ports` entry)."""
    if RATE_BPS < min_rate_bps(line_rate_bps):
        raise ValueError(f"a {RATE_BPS / 1e9:g} Gb/s collector port cannot keep up with reports "
                         f"from a {line_rate_bps / 1e9:g} Gb/s port "
                         f"(needs {min_rate_bps(line_rate_bps) / 1e9:.0f} Gb/s)")
    return {"rate_bps": int(RATE_BPS), "reserved_bytes": reserve_bytes(cell_bytes)}


def check_reserve(queue_stats: Iterable[Mapping[str, Any]], reserved: int,
                  cell_bytes: int) -> dict[str, int]:
    """The collector queue's peak (frames, and buffer bytes at most) from
    the engine's tm_queue_stats; raises when it may have left its reserve."""
    q = [s for s in queue_stats if s["port"] == COLLECTOR_PORT]
    pkts = max((int(s["peak_pkts"]) for s in q), default=0)
    nbytes = max((int(s["peak_bytes"]) for s in q), default=0)
    c = max(1, int(cell_bytes))
    cells = (nbytes + pkts * (c - 1)) // c * c  # the most whole cells those frames can take
    if cells > reserved:
        raise ReportsTookSharedBuffer(
            f"the collector port held up to {pkts} reports ({nbytes} bytes), more than its "
            f"{reserved}-byte reserve: reports took shared buffer from the measured queue")
    return {"collector_peak_frames": pkts, "collector_peak_bytes": nbytes}
