"""The frames a tap reports, one at a time (TapFrame) or a whole capture
as columns (TapFrames), and read from a capture (tap_frames).

A case's capture holds a report per frame the DUT passes, 10^5 and
more: the inference, the gaps and the move onto the DUT's clock work on
the columns; TapFrames is also a sequence of TapFrame for whoever reads
the frames one at a time.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any, Iterable, Iterator, Mapping, Sequence, overload

import numpy as np

from ...control.report_columns import parse_tap_frames
from ...control.reports import ReportError, parse_report_frame

TOWARDS, FROM = 0, 1


@dataclass
class TapFrame:
    """One frame the tap passed, as its report tells it. A value, not to
    be changed (`at` makes a moved copy); not a frozen dataclass only
    because a case makes 10^5 and more of them, at twice the cost each."""

    time_ns: int
    """The tap's ingress timestamp (its own clock)."""
    seq: int
    direction: int
    """TOWARDS (0) the DUT or FROM (1) it."""
    tap_port: int
    frame_bytes: int
    key: bytes
    """The frame's first bytes (the report's inner frame): its identity."""
    bytes_to_dut: int
    bytes_from_dut: int
    pkts_to_dut: int
    pkts_from_dut: int
    node_id: int = 0

    def at(self, time_ns: int) -> "TapFrame":
        """The same frame at another time (what dataclasses.replace gives,
        at a third of its cost: a capture has 10^5 frames and more)."""
        return TapFrame(time_ns, *itertools.islice(self.__dict__.values(), 1, None))


FIELDS = ("time_ns", "seq", "direction", "tap_port", "frame_bytes", "bytes_to_dut",
          "bytes_from_dut", "pkts_to_dut", "pkts_from_dut", "node_id")
"""TapFrame's whole-number fields, TapFrames' columns."""
_INT64_MAX = 2**63 - 1


def whole(values: Any) -> np.ndarray:
    """Whole numbers (an array or a list of ints) as an int64 column, or
    as Python ints (an object column) when one does not fit, so that no
    arithmetic on them wraps (a report's 64-bit counters may hold anything)."""
    if isinstance(values, np.ndarray):
        if values.dtype.kind == "i" or (values.dtype.kind in "ub" and
                                        (not values.size or int(values.max()) <= _INT64_MAX)):
            return values.astype(np.int64, copy=False)
        values = values.tolist()
    try:
        return np.array(values, dtype=np.int64)
    except OverflowError:
        return np.array(values, dtype=object)


@dataclass(eq=False, repr=False)
class TapFrames(Sequence[TapFrame]):
    """Tap frames as columns: FIELDS (whole), their keys apart."""

    columns: Mapping[str, np.ndarray]
    keys: list[bytes]

    def __repr__(self) -> str:
        return f"TapFrames({len(self)} frames)"

    @classmethod
    def of(cls, frames: Sequence[TapFrame]) -> "TapFrames":
        if isinstance(frames, TapFrames):
            return frames
        return cls({name: whole([getattr(f, name) for f in frames]) for name in FIELDS},
                   [f.key for f in frames])

    def __len__(self) -> int:
        return len(self.keys)

    @overload
    def __getitem__(self, i: int) -> TapFrame: ...

    @overload
    def __getitem__(self, i: slice) -> "TapFrames": ...

    def __getitem__(self, i: "int | slice") -> "TapFrame | TapFrames":
        if isinstance(i, slice):
            return TapFrames({k: c[i] for k, c in self.columns.items()}, self.keys[i])
        i = range(len(self))[i]
        return self._frame(*(int(self.columns[k][i]) for k in FIELDS), key=self.keys[i])

    def __iter__(self) -> Iterator[TapFrame]:
        cols = [self.columns[k].tolist() for k in FIELDS]
        for *values, key in zip(*cols, self.keys):
            yield self._frame(*values, key=key)

    @staticmethod
    def _frame(t: int, seq: int, direction: int, tap_port: int, frame_bytes: int, *counts: int,
               key: bytes) -> TapFrame:
        return TapFrame(t, seq, direction, tap_port, frame_bytes, key, *counts)

    def at(self, time_ns: np.ndarray) -> "TapFrames":
        """The same frames at other times."""
        return TapFrames({**self.columns, "time_ns": whole(time_ns)}, self.keys)

    def take(self, order: np.ndarray) -> "TapFrames":
        """The frames at positions `order`, in that order."""
        return TapFrames({k: c[order] for k, c in self.columns.items()},
                         [self.keys[i] for i in order.tolist()])


def frames_from_reports(reports: Iterable[Any]) -> list[TapFrame]:
    """The tap frames of parsed reports (control.reports.Report), in the
    order given (capture order); reports without a DOMAIN_TAP block are
    skipped."""
    out = []
    for r in reports:
        t = r.tap
        if t is None:
            continue
        out.append(TapFrame(int(r.md.ingress_ts_ns or 0), int(r.seq), int(t.direction) & 1,
                            int(r.md.ingress_port or 0), int(t.frame_bytes), bytes(r.inner),
                            int(t.bytes_to_dut), int(t.bytes_from_dut), int(t.pkts_to_dut),
                            int(t.pkts_from_dut), int(r.node_id)))
    return out


def tap_frames(captured: Sequence[tuple[int, bytes]],
               udp_port: int) -> tuple[TapFrames, list[int], int]:
    """The tap frames of a capture of (time, frame) in capture order, the
    time of each one's report, and how many frames were no report (those
    parse_report_frame rejects): what each frame parsed one by one and
    frames_from_reports give, with the reports read in bulk."""
    parsed = parse_tap_frames([f for _, f in captured], udp_port)
    c = parsed.columns
    slow, bad = [], 0
    for i in parsed.slow:
        try:
            r = parse_report_frame(captured[i][1], udp_port)
        except ReportError:
            bad += 1
            continue
        if r.tap is not None:
            slow.append((i, frames_from_reports([r])[0]))
    one_by_one = TapFrames.of([f for _, f in slow])
    position = np.concatenate([c["position"], np.array([i for i, _ in slow], dtype=np.int64)])
    # each part whole first (the parser's columns are uint64: mixed with
    # int64, numpy would make floats of them)
    both = TapFrames({k: whole(np.concatenate([whole(c[k] & 1 if k == "direction" else c[k]),
                                               one_by_one.columns[k]])) for k in FIELDS},
                     parsed.inner + one_by_one.keys)
    order = np.argsort(position, kind="stable")
    return both.take(order), [captured[i][0] for i in position[order].tolist()], bad
