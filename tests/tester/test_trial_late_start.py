"""A stream that starts late in a trial offers frames only from its start:
the tester flags its generator as short only when it sent less than that."""

from __future__ import annotations

from p4scope.experiments.tester.streams import Rate, Stream
from p4scope.experiments.tester.trial import stream_rows


def _row(stream: Stream, tx: int, window_ns: int):
    engine = [{"stream": 7, "rx_port": stream.rx_port, "tx_frames": tx, "tx_bytes": 64 * tx,
               "rx_frames": tx, "rx_bytes": 64 * tx, "lat_min_ns": 10, "lat_avg_ns": 10,
               "lat_max_ns": 10}]
    return stream_rows([stream], engine, [7], 100e9, window_ns).iloc[0]


def test_a_late_stream_at_its_rate_is_not_short():
    # 1 Mframes/s for a 100 us window, on from 40 us: 60 frames offered
    late = Stream(1, 2, Rate(1e6, "fps"), 64, start_ns=40_000)
    assert not _row(late, 60, 100_000)["generator_short"]
    assert not _row(late, 59, 100_000)["generator_short"]  # the window's rounding
    assert _row(late, 50, 100_000)["generator_short"]


def test_a_stream_from_the_start_is_held_to_its_full_rate():
    s = Stream(1, 2, Rate(1e6, "fps"), 64)
    assert not _row(s, 100, 100_000)["generator_short"]
    assert _row(s, 60, 100_000)["generator_short"]
