"""A capture of reports parsed at once (report_columns, apps.capture) gives
exactly what the per-report parser and Collector give frame by frame, on a
real microburst capture with malformed, reordered, missing and other-domain
reports mixed in."""

import struct

import pandas as pd
import pytest

from p4scope.control.apps.capture import collect_capture
from p4scope.control.apps.collector import Collector
from p4scope.control.report_columns import (FrameBlock, _queue_layout, parse_report_frames,
                                            parse_tap_frames)
from p4scope.control.reports import DOMAIN_TAP, ReportError, parse_report_frame
from p4scope.experiments import measure, traffic
from p4scope.experiments.microburst import plan as mbx
from p4scope.experiments.microburst import virtual as mbv
from p4scope.experiments import testbed as tb
from p4scope.experiments.microburst.params import MicroburstParams
from p4scope.experiments.params import default_profiles

UDP = tb.COLLECTOR_UDP


@pytest.fixture(scope="module")
def capture():
    """The report frames of a 2:1 burst of 64 B frames (a report per burst
    packet, interval reports, start and end)."""
    profs = default_profiles(buffer_bytes=256 * 1024, cell_bytes=256)
    case = mbx.plan(MicroburstParams(sizes_2to1=(64,), sizes_4to1=()),
                    {"unfair": profs["unfair"]})[0]
    frames: list[bytes] = []
    mp = pytest.MonkeyPatch()
    real = measure.collector_view

    def keep(tr):
        frames.extend(d for _, d in tr.outputs(tb.COLLECTOR_PORT))
        return real(tr)

    mp.setattr(measure, "collector_view", keep)
    with tb.VirtualSwitch(tb.compile_dut(), profs["unfair"], 3,
                          apply_profile=traffic.apply_profile) as vs:
        mbv.measure_burst(vs, profs["unfair"], case, lambda f: None)
    mp.undo()
    assert len(frames) > 1000
    return frames


def _with_options(frame: bytes) -> bytes:
    """The same report with 4 bytes of IPv4 options (IHL 6)."""
    total = struct.unpack("!H", frame[16:18])[0] + 4
    ip = bytes([0x46]) + frame[15:16] + struct.pack("!H", total) + frame[18:34] + b"\x01\x01\x01\x00"
    return frame[:14] + ip + frame[34:]


def _set(frame: bytes, at: int, value: bytes) -> bytes:
    return frame[:at] + value + frame[at + len(value):]


def _spoiled(frames: list[bytes]) -> list[bytes]:
    """The capture with trouble mixed in: 7 reports missing, two swapped,
    seven malformed frames, a report with IP options, one of another domain,
    inner packets that are not IPv4, carry no ports or carry IP options, a
    report of another burst."""
    f = list(frames)
    del f[200:205]
    del f[400]
    del f[-3]
    f[50], f[51] = f[51], f[50]
    good = f[10]
    inner = 42 + 20 + good[52] * 4  # after the report's metadata
    burst_id = _queue_layout(good, UDP)[1] + 28  # in the queue block
    odd = [good[:30], good[:60], good[:100],
           _set(good, 42, bytes([0x30 | (good[42] & 0xF)])),  # report version 3
           _set(good, 36, struct.pack("!H", UDP + 1)),  # another UDP port
           _set(good, 12, b"\x86\xdd"),  # not IPv4
           _set(good, 52, bytes([60])),  # MD Length past the report
           _with_options(good),
           _set(good, 56, struct.pack("!H", DOMAIN_TAP)),
           _set(good, inner + 12, b"\x81\x00"),  # inner: a VLAN tag, no IPv4
           _set(good, inner + 23, bytes([1])),  # inner: ICMP, no ports
           _set(good, inner + 20, b"\x00\x10"),  # inner: a fragment, no ports
           _set(good, inner + 14, b"\x46"),  # inner: IPv4 options, its ports 4 bytes on
           _set(good, burst_id, struct.pack("!I", 77))]  # a second burst, amid the first
    for i, x in enumerate(odd):
        f.insert(300 + 7 * i, x)
    return f


def test_a_frame_block_is_its_frames():
    frames = [b"ab", b"", b"cdef", b"g"]
    block = FrameBlock.of(frames)
    assert len(block) == 4 and list(block) == frames and block[2] == b"cdef" and block[1:3] == frames[1:3]
    assert FrameBlock.of(block) is block
    assert list(FrameBlock.joined([block, FrameBlock.of([b"xy"])])) == frames + [b"xy"]
    assert len(FrameBlock.joined([])) == 0 and len(FrameBlock.of([])) == 0
    with pytest.raises(ValueError):
        FrameBlock(b"abc", [1, 1])


@pytest.mark.parametrize("as_block", [False, True])
def test_columns_read_every_field_as_the_per_report_parser(capture, as_block):
    frames = _spoiled(capture)
    cols = parse_report_frames(FrameBlock.of(frames) if as_block else frames, UDP)
    q = {k: v.tolist() for k, v in cols.queue.items()}
    rows = {p: i for i, p in enumerate(q["position"])}
    others = dict(cols.others)
    errors = dict(cols.errors)
    assert len(rows) + len(others) + len(errors) == len(frames)
    assert len(errors) == 7 and len(others) == 1
    for p, frame in enumerate(frames):
        try:
            r = parse_report_frame(frame, UDP)
        except ReportError as e:
            assert errors[p] == str(e)
            continue
        if r.queue is None:
            assert others[p] == r
            continue
        i = rows[p]
        assert (q["hw_id"][i], q["seq"][i], q["node_id"][i]) == (r.hw_id, r.seq, r.node_id)
        for name in ("ingress_port", "egress_port", "hop_latency_ns", "queue_id",
                     "queue_occupancy", "ingress_ts_ns", "egress_ts_ns"):
            assert q[name][i] == (getattr(r.md, name) or 0), name
        for name in ("events", "flags", "frame_bytes", "enq_qdepth", "deq_qdepth", "enq_qbytes",
                     "deq_qbytes", "buffer_bytes", "queue_time_ns", "burst_id", "burst_pkts",
                     "interval_max_pkts", "interval_max_bytes", "interval"):
            assert q[name][i] == getattr(r.queue, name), name


@pytest.mark.parametrize("as_block", [False, True])
def test_captured_reports_give_the_collectors_tables(capture, as_block):
    frames = _spoiled(capture)
    col = Collector(udp_port=UDP)
    col.feed_frames(frames)
    cap = collect_capture(FrameBlock.of(frames) if as_block else frames, UDP)
    assert cap.errors == col.errors and len(cap.errors) == 7
    assert cap.lost == col.lost and col.lost[1] >= 7
    assert cap.bursts() == col.bursts() and [b.burst_id for b in cap.bursts()] == [1, 77]
    assert cap.bursts(31) == col.bursts(31) and cap.bursts(2) == []
    assert cap.tap == col.tap and len(cap.tap) == 1
    want, got = col.tables(), cap.tables()
    assert set(want) == set(got)
    for name in want:
        pd.testing.assert_frame_equal(got[name], want[name], check_exact=True, obj=name)
    s = got["queue_samples"]
    assert len(s) > 1000 and s["flow"].isna().sum() == 1
    assert s["flow"].str.endswith("None, None)").sum() == 2
    assert len(got["intervals"]) > 10
    lean = cap.tables(flows=False)
    pd.testing.assert_frame_equal(lean["queue_samples"], s.drop(columns="flow"), check_exact=True)
    for name in set(want) - {"queue_samples"}:
        pd.testing.assert_frame_equal(lean[name], want[name], check_exact=True, obj=name)


def test_an_empty_or_all_malformed_capture(capture):
    for frames in ([], [capture[0][:20], capture[0][:50]]):
        col = Collector(udp_port=UDP)
        col.feed_frames(frames)
        cap = collect_capture(frames, UDP)
        assert cap.errors == col.errors and cap.lost == col.lost == {}
        want, got = col.tables(), cap.tables()
        for name in want:
            pd.testing.assert_frame_equal(got[name], want[name], check_exact=True, obj=name,
                                          check_dtype=False, check_index_type=False)
            assert got[name].empty


# ----- a tap's capture ------------------------------------------------------------------

@pytest.fixture(scope="module")
def tap_capture():
    """What the taps captured of a 2:1 burst of 64 B frames through the
    reference DUT (a report per frame each tap passes), as (time, frame)."""
    pytest.importorskip("p4scope_dataplane")
    from p4scope.experiments.tap import virtual_run as vr
    from tests.experiments.tap_burst import burst_through_taps

    burst = burst_through_taps(tb.compile_dut(), tb.compile_dut(vr.TAP_SOURCE), 64, 0.25)
    captured = burst.captured
    assert len(captured) > 1000
    return captured


def test_a_taps_capture_read_in_bulk_is_what_the_reports_one_by_one_give(tap_capture):
    """tap_frames against each frame parsed one by one, then
    frames_from_reports, on the capture with trouble mixed in: reports
    missing and swapped, malformed frames, IP options, a report of another
    domain, one of another UDP port, one whose inner packet is said to be
    IPv4 (its INT-MD parsed)."""
    from p4scope.experiments.tap import placement as pl
    from p4scope.experiments.tap.frames import frames_from_reports, tap_frames

    cap = list(tap_capture)
    del cap[100:104]
    cap[20], cap[21] = cap[21], cap[20]
    t, good = cap[10]
    odd = [good[:30], good[:70], _with_options(good),
           _set(good, 42, bytes([0x30 | (good[42] & 0xF)])),  # report version 3
           _set(good, 36, struct.pack("!H", pl.REPORT_UDP_PORT + 1)),
           _set(good, 56, struct.pack("!H", 0x5151)),  # another domain
           _set(good, 50, bytes([(good[50] & 0xF0) | 4])),  # inner said to be IPv4
           _set(good, 52, bytes([60]))]  # MD Length past the report
    for i, x in enumerate(odd):
        cap.insert(200 + 5 * i, (t + i, x))
    reports, stamps, bad = [], [], 0
    for ts, f in cap:
        try:
            r = parse_report_frame(f, pl.REPORT_UDP_PORT)
        except ReportError:
            bad += 1
            continue
        if r.tap is not None:
            reports.append(r)
            stamps.append(ts)
    frames, got_stamps, got_bad = tap_frames(cap, pl.REPORT_UDP_PORT)
    assert list(frames) == frames_from_reports(reports) and got_stamps == stamps and got_bad == bad
    # rejected: the two short ones, version 3, the other port, the MD Length;
    # not a tap's: the other domain
    assert bad == 5 and len(frames) == len(cap) - 6
    parsed = parse_tap_frames([f for _, f in cap], pl.REPORT_UDP_PORT)
    # the odd ones (the IPv4 inner one too) one by one, every other in bulk
    assert parsed.slow == list(range(200, 200 + 5 * len(odd), 5))
    assert len(parsed.columns["position"]) == len(parsed.inner) == len(cap) - len(odd)
