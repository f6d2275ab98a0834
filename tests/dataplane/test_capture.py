"""Capture in virtual time: the frames leaving chosen ports, with their
departure times, bounded by a limit that counts what it does not keep."""

from tests.dataplane.test_sim import engine


def test_captured_frames_are_the_frames_that_left_the_port():
    e = engine()
    e.record_rx()
    e.capture_port(31)
    e.capture_port(7)  # nothing leaves port 7
    e.add_stream(1, size=200, rate_pct=50, duration_ns=20_000)
    e.run(until_ns=10_000)
    first = e.take_captured(31)
    e.run(until_ns=40_000)
    frames = first + e.take_captured(31)
    (port,) = [p for p in e.port_rx_stats() if p["port"] == 31]
    assert len(first) > 0 and len(frames) == port["rx_frames"]
    assert all(isinstance(t, int) and isinstance(b, bytes) and len(b) == 196 for t, b in frames)
    rec = e.rx_records()
    assert [t for t, _ in frames] == list(rec["rx_ns"])  # departure times, in order
    seqs = [int.from_bytes(b[-10:-6], "big") for _, b in frames]
    assert seqs == list(rec["seq"])
    assert e.take_captured(31) == [] and e.take_captured(7) == [] and e.take_captured(5) == []
    assert e.capture_stats() == {31: {"limit": 1 << 20, "held": 0, "kept": len(frames), "not_kept": 0},
                                 7: {"limit": 1 << 20, "held": 0, "kept": 0, "not_kept": 0}}


def test_limit_counts_frames_not_kept_and_capture_changes_nothing():
    a, b = engine(seed=3), engine(seed=3)
    b.capture_port(31, limit=5)
    for e in (a, b):
        e.add_stream(1, size=64, rate_pct=100, frames=40)
        e.run(drain=True)
    assert a.sim_digest() == b.sim_digest()
    assert b.capture_stats()[31] == {"limit": 5, "held": 5, "kept": 5, "not_kept": 35}
    got = b.take_captured(31)
    assert len(got) == 5 and [t for t, _ in got] == sorted(t for t, _ in got)
    b.capture_stop(31)
    assert b.capture_stats() == {} and b.take_captured(31) == []


def test_a_block_take_holds_the_same_frames_and_times():
    """take_captured_block: the same capture as take_captured, as columns
    and one byte string (two engines, one seed)."""
    import numpy as np

    from p4scope.control.report_columns import FrameBlock

    a, b = engine(seed=5), engine(seed=5)
    for e in (a, b):
        e.capture_port(31)
        e.add_stream(1, weights=[(64, 1), (1518, 1), (300, 2)], rate_pct=100, frames=50)
        e.run(drain=True)
    want = a.take_captured(31)
    times, lengths, data = b.take_captured_block(31)
    block = FrameBlock(data, np.frombuffer(lengths, dtype=np.uint32))
    assert len({len(f) for _, f in want}) == 3
    assert list(np.frombuffer(times, dtype=np.uint64)) == [t for t, _ in want]
    assert list(block) == [f for _, f in want]
    times, lengths, data = b.take_captured_block(31)
    assert (len(times), len(lengths), data) == (0, 0, b"")
    assert b.take_captured_block(7) == (times, lengths, b"")
