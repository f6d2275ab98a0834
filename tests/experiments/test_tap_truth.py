"""The tap's inferred queue scored against the DUT's own ground truth
(tap.truth), on hand-made reports and a hand-made trace: exact where the
two agree, each bar failing where they do not, no verdict where lost
reports leave the tap's figure unknown; and the links' time the tap takes
off its reports (tap.virtual) as the engine's Fabric counts it."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from p4scope.control.packets import udp_frame
from p4scope.experiments.tap import truth as tt
from p4scope.experiments.tap.inference import FROM, TOWARDS, TapFrame, Wiring, infer
from p4scope.experiments.tap.virtual import link_ns, on_dut_clock

H3 = 0x020000000003
WIRING = Wiring({1: 1, 2: 2, 3: 3, 257: 1, 258: 2, 259: 3}, {H3: 3})
ENQ, DEQ, DROP = 0, 1, 2


def key(src: int, n: int) -> bytes:
    return udp_frame(dst_mac="02:00:00:00:00:03", src_mac=f"02:00:00:00:00:{src:02x}",
                     sport=1000 + n, size=64)[:60]


class Scenario:
    """Frames into DUT port 3 from ports 1 and 2: what the DUT's trace
    records and what a tap (every frame reported) sees, at the same times."""

    def __init__(self) -> None:
        self.rows: list[tuple] = []  # time, port, ingress, kind, len, q_bytes, in_bytes
        self.q = 0
        self.held = {1: 0, 2: 0}
        self.frames: list[TapFrame] = []
        self.sent = [0, 0]
        self.count = [0, 0]

    def _tap(self, t: int, direction: int, port: int, k: bytes, size: int, lose: bool) -> None:
        self.sent[direction] += size
        self.count[direction] += 1
        f = TapFrame(t, len(self.frames), direction, port, size, k, self.sent[0], self.sent[1],
                     self.count[0], self.count[1])
        if not lose:
            self.frames.append(f)
        else:  # the report is lost before the tap numbers it: only the counts tell
            self.frames.append(None)  # type: ignore[arg-type]

    def arrive(self, t: int, ingress: int, n: int, size: int = 100, drop: bool = False,
               lose: bool = False) -> None:
        self._tap(t, TOWARDS, ingress, key(ingress, n), size, lose)
        if drop:
            self.rows.append((t, 3, ingress, DROP, size, self.q, self.held[ingress]))
            return
        self.q += size
        self.held[ingress] += size
        self.rows.append((t, 3, ingress, ENQ, size, self.q, self.held[ingress]))

    def leave(self, t: int, ingress: int, n: int, size: int = 100, lose: bool = False) -> None:
        self.q -= size
        self.held[ingress] -= size
        self.rows.append((t, 3, ingress, DEQ, size, self.q, self.held[ingress]))
        self._tap(t, FROM, 259, key(ingress, n), size, lose)

    def trace(self) -> dict[str, np.ndarray]:
        cols = ("time_ns", "port", "ingress", "kind", "len", "q_bytes", "in_bytes")
        return {c: np.array([r[i] for r in self.rows]) for i, c in enumerate(cols)}

    def reports(self) -> list[TapFrame]:
        out = [f for f in self.frames if f is not None]
        return [TapFrame(f.time_ns, i, *list(f.__dict__.values())[2:]) for i, f in enumerate(out)]


def burst(lose: bool = False) -> Scenario:
    """A 2:1 burst: ports 1 and 2 each send 6 frames every 10 ns from t=0,
    the port sends one every 10 ns from t=5; port 2's 6th frame is
    dropped; with `lose`, the report of port 2's 4th frame is lost."""
    events = [(10 * k, 0, ing, k) for k in range(6) for ing in (1, 2)]
    order = [(1, 0), (2, 0), (1, 1), (2, 1), (1, 2), (2, 2), (1, 3), (2, 3), (1, 4), (2, 4), (1, 5)]
    events += [(5 + 10 * i, 1, ing, n) for i, (ing, n) in enumerate(order)]
    s = Scenario()
    for t, kind, ing, n in sorted(events):
        if kind == 0:
            s.arrive(t, ing, n, drop=(ing, n) == (2, 5), lose=lose and (ing, n) == (2, 3))
        else:
            s.leave(t, ing, n)
    return s


def test_the_truth_of_a_port_from_its_trace():
    s = burst()
    truth = tt.port_truth(s.trace(), 3)
    assert truth.drop_frames == 1 and truth.drop_bytes == 100
    assert truth.q_bytes.max() == 600
    t, v = truth.series()
    assert v[-1] == 0 and np.all(np.diff(t) > 0)  # one value per nanosecond
    assert set(truth.by_ingress) == {1, 2}
    assert truth.peak_within(0, 20) == 400


def test_a_tap_that_sees_what_the_dut_did_scores_exactly():
    s = burst()
    inf = infer(s.reports(), WIRING)
    truth = tt.port_truth(s.trace(), 3)
    rows = tt.score("c", 3, inf, truth, on=300, off=150, frame_bytes=100, frame_time_ns=10)
    assert len(rows) == 1
    r = rows[0]
    assert r["reference_burst"] and r["tap_burst"] and not r["lost_reports"]
    assert r["peak_tap_bytes"] == r["peak_reference_bytes"] == 600
    assert r["start_error_ns"] == 0 and r["end_error_ns"] == 0
    assert r["mean_error_bytes"] == pytest.approx(0)
    assert r["share_error_pp"] == pytest.approx(0)
    shares = json.loads(r["shares_tap"])
    assert shares == json.loads(r["shares_reference"])
    assert sum(shares.values()) == pytest.approx(1) and set(shares) == {"1", "2"}
    for c in tt.CHECKS:
        assert r[c] is True, c
    err = pd.DataFrame([{**r, "drops_tap_frames": len(inf.drops), "drops_truth_frames": 1,
                         "unresolved_frames": 0}])
    assert tt.state(tt.case_checks(err).iloc[0]["all_pass"]) is True


def test_each_bar_fails_where_the_tap_is_off():
    s = burst()
    truth = tt.port_truth(s.trace(), 3)
    # the tap's clock runs two frame times late for what leaves: a longer, higher burst
    late = [f if f.direction == TOWARDS else TapFrame(f.time_ns + 20, *list(f.__dict__.values())[1:])
            for f in s.reports()]
    r = tt.score("c", 3, infer(late, WIRING), truth, 300, 150, 100, 10)[0]
    assert r["peak_error_bytes"] == 200 and r["peak_within_tolerance"] is False
    assert r["end_error_ns"] == 20 and r["end_within_tolerance"] is False
    # a tolerance of one frame (the bar's, here 1 % is less) passes one frame off
    assert tt.peak_tolerance(600, 100) == 100


def test_a_burst_only_one_side_has_fails():
    s = burst()
    truth = tt.port_truth(s.trace(), 3)
    rows = tt.score("c", 3, infer(s.reports(), WIRING), truth, on=900, off=100,
                    frame_bytes=100, frame_time_ns=10)
    assert rows == []  # neither side crossed 900
    quiet = tt.port_truth({c: v[:0] for c, v in s.trace().items()}, 3)
    rows = tt.score("c", 3, infer(s.reports(), WIRING), quiet, 300, 150, 100, 10)
    assert len(rows) == 1 and rows[0]["tap_burst"] and not rows[0]["reference_burst"]
    assert rows[0]["peak_within_tolerance"] is False


def test_lost_reports_give_no_verdict_not_a_made_up_figure():
    s = burst(lose=True)
    inf = infer(s.reports(), WIRING)
    assert inf.unknown, "the counts show the lost report"
    truth = tt.port_truth(s.trace(), 3)
    r = tt.score("c", 3, inf, truth, 300, 150, 100, 10)[0]
    assert r["lost_reports"] is True
    for c in tt.CHECKS:
        assert r[c] is None, c
    assert math.isnan(r["mean_tap_bytes"])
    err = pd.DataFrame([{**r, "drops_tap_frames": 0, "drops_truth_frames": 1,
                         "unresolved_frames": 1}])
    ch = tt.case_checks(err).iloc[0]
    assert tt.state(ch["drops_equal"]) is None and tt.state(ch["all_pass"]) is None


def test_case_checks_read_back_from_a_table():
    err = pd.DataFrame({"case_id": ["a", "a", "b", "c"],
                        "peak_within_tolerance": [True, None, True, False],
                        "start_within_tolerance": [True, True, True, True],
                        "end_within_tolerance": [True, True, True, True],
                        "shares_within_tolerance": [True, True, float("nan"), True]})
    ch = tt.case_checks(err).set_index("case_id")
    assert tt.state(ch.loc["a", "peak_within_tolerance"]) is None
    assert tt.state(ch.loc["a", "all_pass"]) is None
    assert tt.state(ch.loc["b", "shares_within_tolerance"]) is None
    assert tt.state(ch.loc["b", "peak_within_tolerance"]) is True
    assert tt.state(ch.loc["c", "all_pass"]) is False


@pytest.mark.parametrize("frame_bytes, rate, delay, ns", [
    (1514, 100e9, 0, 123),      # (1514 + 4 + 8) x 8 / 100 = 122.08 ns, rounded up
    (60, 100e9, 0, 6),          # 5.76 ns
    (1514, 100e9, 500, 623),
    (9212, 40e9, 0, 1845),      # 1844.8 ns
])
def test_the_links_time_as_the_fabric_counts_it(frame_bytes, rate, delay, ns):
    assert link_ns(frame_bytes, rate, delay) == ns


def test_reports_are_moved_to_the_duts_side_of_their_links():
    f = [TapFrame(1000, 0, TOWARDS, 1, 1514, b"a", 1514, 0, 1, 0),
         TapFrame(2000, 1, FROM, 259, 1514, b"a", 1514, 1514, 1, 1)]
    got = on_dut_clock(f, 100e9, 100)
    assert [g.time_ns for g in got] == [1223, 1777]
    assert got[0].key == b"a" and got[1].direction == FROM
