"""The tap's inference of another switch's queue, on hand-made reports:
occupancy per egress port and per ingress port, drops apart from queued
bytes, bursts with their culprits, and lost reports marked, not invented."""

from __future__ import annotations

import math

import numpy as np
import pytest

from p4scope.control.packets import udp_frame
from p4scope.experiments.tap.inference import (FROM, TOWARDS, TapFrame, Wiring, find_gaps,
                                               infer)

H3 = "02:00:00:00:00:03"
H3_INT = 0x020000000003
WIRING = Wiring({1: 1, 2: 2, 3: 3, 257: 1, 258: 2, 259: 3}, {H3_INT: 3})


class FakeTap:
    """What tap.p4 reports for each frame it passes (every frame sampled):
    the cumulative counts include the frame; `lose` drops the report but
    the counts still move, as when the collector misses one."""

    def __init__(self) -> None:
        self.seq = 0
        self.bytes = [0, 0]
        self.pkts = [0, 0]
        self.frames: list[TapFrame] = []

    def frame(self, t: int, direction: int, tap_port: int, key: bytes, size: int,
              lose: bool = False) -> None:
        self.bytes[direction] += size
        self.pkts[direction] += 1
        f = TapFrame(t, self.seq, direction, tap_port, size, key, self.bytes[0], self.bytes[1],
                     self.pkts[0], self.pkts[1])
        self.seq += 1
        if not lose:
            self.frames.append(f)


def key(src: int, n: int, dst: str = H3) -> bytes:
    return udp_frame(dst_mac=dst, src_mac=f"02:00:00:00:00:{src:02x}", sport=1000 + n,
                     size=64)[:60]


A, B, C, D, S = key(1, 1), key(2, 1), key(1, 2), key(2, 2), key(9, 9, "ff:ff:ff:ff:ff:ff")


def incast(lose_b_leaving: bool = False) -> FakeTap:
    """Ports 1 and 2 send A, C and B, D towards host 3; D is dropped; the
    DUT also sends one frame of its own (S)."""
    tap = FakeTap()
    tap.frame(1000, TOWARDS, 1, A, 100)
    tap.frame(1100, TOWARDS, 2, B, 200)
    tap.frame(1200, TOWARDS, 1, C, 100)
    tap.frame(1300, TOWARDS, 2, D, 200)
    tap.frame(2000, FROM, 259, A, 100)
    tap.frame(2500, FROM, 259, B, 200, lose=lose_b_leaving)
    tap.frame(2700, FROM, 257, S, 60)
    tap.frame(3000, FROM, 259, C, 100)
    return tap


def _series(inf, port=3):
    d = inf.port_series(port)
    return list(zip(d["t_ns"].tolist(), d["occupancy_bytes"].tolist()))


def test_occupancy_is_bytes_in_minus_bytes_out_minus_drops_exactly():
    inf = infer(incast().frames, WIRING)
    assert _series(inf) == [(1000, 100), (1100, 300), (1200, 400), (2000, 300), (2500, 100),
                            (3000, 0)]
    frames = inf.port_series(3)["occupancy_frames"].tolist()
    assert frames == [1, 2, 3, 2, 1, 0]
    assert inf.peak(3) == (400.0, 1200.0)
    assert inf.ports() == [3]  # the DUT's own frame counts nowhere
    assert inf.strays == 1 and inf.unmatched_departures == 0
    assert inf.gaps == [] and inf.unknown == [] and inf.lost_reports == 0
    assert inf.series["valid"].all()


def test_shares_split_the_occupancy_by_the_ingress_port():
    inf = infer(incast().frames, WIRING)
    by = {p: list(zip(g["t_ns"].tolist(), g["occupancy_bytes"].tolist()))
          for p, g in inf.by_ingress.groupby("ingress_port")}
    assert by == {1: [(1000, 100), (1200, 200), (2000, 100), (3000, 0)],
                  2: [(1100, 200), (2500, 0)]}


def test_frames_never_seen_leaving_are_drops_apart_from_the_queue():
    inf = infer(incast().frames, WIRING)
    drops = inf.drops
    assert len(drops) == 1
    d = drops.iloc[0]
    assert (d["t_ns"], d["ingress_port"], d["egress_port"], d["frame_bytes"]) == (1300, 2, 3, 200)
    left = inf.frames[inf.frames["fate"] == "left"].sort_values("t_ns")
    assert left["left_ns"].tolist() == [2000, 2500, 3000]
    assert set(inf.frames["fate"]) == {"left", "dropped"}


def test_bursts_have_start_peak_end_size_and_culprits():
    inf = infer(incast().frames, WIRING)
    b = inf.bursts(on_bytes=300, off_bytes=150)
    assert len(b) == 1
    r = b.iloc[0]
    assert (r["egress_port"], r["start_ns"], r["peak_ns"], r["end_ns"]) == (3, 1100, 1200, 2500)
    assert (r["peak_bytes"], r["peak_frames"]) == (400, 3)
    # what came in towards port 3 while it lasted: B, C and D (dropped)
    assert (r["bytes_in"], r["frames_in"], r["dropped_frames"], r["dropped_bytes"]) == (500, 3, 1, 200)
    assert r["by_ingress"] == {1: 100, 2: 400}
    assert r["culprits"] == "2 (80%), 1 (20%)"
    assert r["held_at_peak"] == {1: 200, 2: 200}
    assert r["flows"].startswith("10.0.0.1>10.0.0.2 17 ")
    assert r["complete"] and not r["lost_reports"]


def test_lost_reports_mark_the_intervals_they_touch_instead_of_inventing_values():
    inf = infer(incast(lose_b_leaving=True).frames, WIRING)
    (g,) = inf.gaps
    assert (g.start_ns, g.end_ns, g.lost_reports) == (2000, 2700, 1)
    assert (g.lost_from_frames, g.lost_from_bytes, g.lost_to_frames, g.lost_to_bytes) == (1, 200, 0, 0)
    # B and D may have left unseen in the gap: from their arrivals to its end nothing is known
    assert inf.unknown == [(1100, 2700)]
    s = inf.port_series(3)
    known = s[s["valid"]]
    assert list(zip(known["t_ns"], known["occupancy_bytes"])) == [(1000, 100), (2700, 100), (3000, 0)]
    assert s[~s["valid"]]["occupancy_bytes"].isna().all()
    assert s[(s["t_ns"] >= 1100) & (s["t_ns"] < 2700)]["valid"].sum() == 0
    assert inf.drops.empty  # not counted as drops: they may have left unseen
    assert sorted(inf.frames[inf.frames["fate"] == "unresolved"]["t_ns"]) == [1100, 1300]
    assert inf.strays == 1  # no arrival report was lost: the DUT's frame is still its own
    b = inf.bursts(on_bytes=50, off_bytes=50)
    assert b["lost_reports"].all()


def test_a_lost_arrival_report_leaves_its_departure_unmatched_and_marked():
    tap = FakeTap()
    tap.frame(100, TOWARDS, 1, A, 100)
    tap.frame(200, TOWARDS, 2, B, 100, lose=True)
    tap.frame(300, TOWARDS, 1, C, 100)
    tap.frame(400, FROM, 259, A, 100)
    tap.frame(500, FROM, 259, B, 100)
    tap.frame(600, FROM, 259, C, 100)
    inf = infer(tap.frames, WIRING)
    (g,) = find_gaps(tap.frames)
    assert (g.start_ns, g.end_ns, g.lost_to_frames, g.lost_to_bytes) == (100, 300, 1, 100)
    assert inf.unmatched_departures == 1 and inf.strays == 0
    assert inf.unknown == [(100, 500)]
    known = inf.port_series(3)
    known = known[known["valid"]]
    assert list(zip(known["t_ns"], known["occupancy_bytes"])) == [(500, 100), (600, 0)]


def test_a_departure_is_never_matched_to_a_later_or_same_port_arrival():
    tap = FakeTap()
    tap.frame(100, FROM, 259, A, 100)   # leaves before it is seen entering: not this frame
    tap.frame(200, TOWARDS, 3, A, 100)  # from port 3's host ...
    tap.frame(300, FROM, 259, A, 100)   # ... cannot leave by port 3
    inf = infer(tap.frames, WIRING)
    assert inf.strays == 2 and inf.series.empty
    assert inf.frames["fate"].tolist() == ["dropped"]


def test_identical_frames_match_first_in_first_out():
    tap = FakeTap()
    for t in (10, 20, 30):
        tap.frame(t, TOWARDS, 1, A, 100)
    for t in (40, 50):
        tap.frame(t, FROM, 259, A, 100)
    inf = infer(tap.frames, WIRING)
    # which of three identical frames the DUT dropped cannot be told: the last, as a FIFO would
    assert _series(inf) == [(10, 100), (20, 200), (40, 100), (50, 0)]
    assert inf.drops["t_ns"].tolist() == [30]
    assert np.array_equal(inf.frames.sort_values("t_ns")["left_ns"].to_numpy()[:2], [40, 50])


def test_an_empty_tap_infers_nothing():
    inf = infer([], WIRING)
    assert inf.series.empty and inf.frames.empty and inf.bursts(100).empty
    assert math.isnan(inf.peak(3)[0])


@pytest.mark.parametrize("size", [64, 1518])
def test_occupancy_in_frames_counts_each_frame_once(size):
    tap = FakeTap()
    tap.frame(1, TOWARDS, 1, A, size)
    tap.frame(2, FROM, 259, A, size)
    inf = infer(tap.frames, WIRING)
    assert inf.port_series(3)["occupancy_frames"].tolist() == [1, 0]
    assert inf.peak(3, "frames") == (1.0, 1.0)


def test_a_frame_moved_in_time_is_replace_of_its_time():
    import dataclasses

    f = TapFrame(5, 7, FROM, 259, 1514, b"key", 10, 20, 1, 2, 0x103)
    assert f.at(42) == dataclasses.replace(f, time_ns=42) and f.at(42).time_ns == 42
    assert f.time_ns == 5


def test_the_flow_text_is_the_headers_and_only_the_headers():
    """Frames alike up to their ports have one flow text whatever follows
    (the tester's frame numbers); other ports, IP options, short frames
    and other protocols read as they parse."""
    from p4scope.experiments.tap.inference import _flow, _flow_of_headers

    def frame(sport: int = 1000, payload: bytes = b"x" * 30) -> bytes:
        return udp_frame(H3, "02:00:00:00:00:01", "10.0.0.1", "10.0.0.3", sport, 2000, payload)

    a, b = frame(payload=b"\x00" * 30), frame(payload=b"\x01" * 30)
    assert _flow(a) == _flow(b) == "10.0.0.1>10.0.0.3 17 1000>2000 from 02:00:00:00:00:01"
    assert _flow(frame(sport=1001)) == "10.0.0.1>10.0.0.3 17 1001>2000 from 02:00:00:00:00:01"
    options = a[:14] + bytes([0x46]) + a[15:34] + b"\x01\x01\x01\x00" + bytes([0x03, 0xE9]) + a[36:]
    assert _flow(options) == "10.0.0.1>10.0.0.3 17 1001>2000 from 02:00:00:00:00:01"
    for key in (a[:10], a[:14], a[:30], a[:36]):  # short of the IPv4 header or the ports
        assert _flow(key) == _flow_of_headers.__wrapped__(key)
    assert _flow(a[:30]) is None and _flow(a[:36]) == "10.0.0.1>10.0.0.3 17 - from 02:00:00:00:00:01"
    assert _flow(a[:12] + b"\x86\xdd" + a[14:]) is None


@pytest.mark.parametrize("seed", range(40))
def test_keys_seen_once_match_in_bulk_as_one_by_one(seed: int):
    """The matching in bulk (keys that arrived once: the tester's frames)
    pairs exactly what the one-by-one rule pairs: per (port, key) first
    in, first out, never a frame with the port it came in by, nor with an
    arrival after the departure; keys arriving more than once, departures
    of keys never seen arriving, ports unknown (-1) and equal times
    mixed in."""
    from p4scope.experiments.tap.inference import _match, _match_each, _Side

    rng = np.random.default_rng(seed)

    def side(n: int, nkeys: int) -> _Side:
        t = np.sort(rng.integers(0, 50, n))
        return _Side(rng.integers(0, nkeys, n), t, rng.choice([64, 1500], n), rng.integers(-1, 4, n))

    nkeys = int(rng.choice([5, 40, 400]))
    arrivals, departures = side(int(rng.integers(0, 200)), nkeys), side(int(rng.integers(0, 200)), nkeys)
    d, a = _match(arrivals, departures, nkeys)
    d_ref, a_ref = _match_each(arrivals, departures, np.arange(len(departures.key)))
    assert d.tolist() == d_ref.tolist() and a.tolist() == a_ref.tolist()
    assert (arrivals.key[a] == departures.key[d]).all() and (arrivals.port[a] != departures.port[d]).all()


def test_frames_as_columns_are_the_frames():
    """TapFrames holds what the TapFrames it was made of hold, as a
    sequence (indexing from either end, slices, iteration) and moved in
    time; a 64-bit counter past int64 is kept exactly."""
    from p4scope.experiments.tap.inference import TapFrames

    fs = [TapFrame(5, 7, FROM, 259, 1514, b"a", 10, 20, 1, 2, 0x103),
          TapFrame(9, 8, TOWARDS, 1, 64, b"b", 2**64 - 1, 20, 2**32 - 1, 2, 0x101),
          TapFrame(3, 9, TOWARDS, 2, 100, b"c", 30, 0, 3, 0)]
    cols = TapFrames.of(fs)
    assert list(cols) == fs and len(cols) == 3 and cols[-1] == fs[2] and cols[1] == fs[1]
    assert list(cols[1:]) == fs[1:] and TapFrames.of(cols) is cols
    assert cols.columns["bytes_to_dut"].dtype == object and cols.columns["time_ns"].dtype == np.int64
    assert list(cols.at(np.array([1, 2, 3]))) == [f.at(t) for f, t in zip(fs, [1, 2, 3])]
    with pytest.raises(IndexError):
        cols[3]


def _gaps_one_pair_at_a_time(frames: list[TapFrame]) -> list[tuple]:
    """find_gaps' rule, pair by pair: each report against the node's one
    before it (the reference the columns are checked against)."""
    out, last = [], {}
    for b in frames:
        a, last[b.node_id] = last.get(b.node_id), b
        if a is None:
            continue
        seq = (b.seq - a.seq - 1) & 0x3FFFFF
        seq = seq if seq < 0x200000 else 0
        to = b.direction == TOWARDS
        to_f = ((b.pkts_to_dut - a.pkts_to_dut) & 0xFFFFFFFF) - to
        to_b = b.bytes_to_dut - a.bytes_to_dut - (b.frame_bytes if to else 0)
        fr_f = ((b.pkts_from_dut - a.pkts_from_dut) & 0xFFFFFFFF) - (not to)
        fr_b = b.bytes_from_dut - a.bytes_from_dut - (0 if to else b.frame_bytes)
        if seq or to_f > 0 or to_b > 0 or fr_f > 0 or fr_b > 0:
            out.append((min(a.time_ns, b.time_ns), max(a.time_ns, b.time_ns), seq, max(0, to_f),
                        max(0, to_b), max(0, fr_f), max(0, fr_b)))
    return out


@pytest.mark.parametrize("huge", [0, 2**64 - 3000])
@pytest.mark.parametrize("seed", range(10))
def test_gaps_in_columns_are_the_pairs_rule(seed: int, huge: int):
    """Two taps' reports interleaved, some lost, some swapped, the sequence
    numbers and the 32-bit frame counts wrapping, byte counts from 0 or
    near 2^64: find_gaps gives the pair-by-pair rule's gaps, in capture
    order."""
    import random

    r = random.Random(seed)
    taps = {node: FakeTap() for node in (0x101, 0x102)}
    for node, tap in taps.items():
        tap.seq, tap.bytes, tap.pkts = 0x3FFFF0, [huge, huge], [2**32 - 5, 2**32 - 5]
        for i in range(300):
            tap.frame(i * 10 + r.randrange(10), r.choice([TOWARDS, FROM]), 1, b"k",
                      r.choice([64, 1500]), lose=r.random() < 0.03)
        for f in tap.frames:
            f.node_id = node
    frames = sorted(taps[0x101].frames + taps[0x102].frames, key=lambda f: f.time_ns)
    for _ in range(10):
        i = r.randrange(len(frames) - 1)
        frames[i], frames[i + 1] = frames[i + 1], frames[i]
    got = [(g.start_ns, g.end_ns, g.lost_reports, g.lost_to_frames, g.lost_to_bytes,
            g.lost_from_frames, g.lost_from_bytes) for g in find_gaps(frames)]
    assert got == _gaps_one_pair_at_a_time(frames) and got
