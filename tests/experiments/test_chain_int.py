"""INT-MD through a chain of 4 reference DUTs in virtual time
(experiments.chain_int): every hop's latency and queue occupancy from the
sinks' reports against each switch's ground truth, frame by frame; the
hops plus the wires add up to the tester's latency; frames reach the
tester as they were sent."""

import dataclasses

import numpy as np
import pytest


from p4scope.experiments import chain_int as ci  # noqa: E402
from p4scope.experiments import testbed as tb  # noqa: E402
from p4scope.experiments.fabric import EAST, WEST  # noqa: E402
from p4scope.experiments.linerate import frame_time_ns  # noqa: E402
from p4scope.experiments.params import default_profiles  # noqa: E402


@pytest.fixture(scope="module")
def program():
    return tb.compile_dut()


@pytest.fixture(scope="module")
def fair():
    return default_profiles()["fair"]


def at_40g(profile):
    rate = {"rate_bps": int(40e9)}
    return dataclasses.replace(profile, ports={**profile.ports, WEST: rate, EAST: rate})


def test_int_md_per_hop_latency_and_occupancy_are_the_ground_truth(program, fair):
    # switch 1 (node 2) runs its chain ports at 40G: bursts queue there
    with ci.int_md_chain(program, 4, fair, delay_ns=250,
                         profiles=[fair, at_40g(fair), fair, fair]) as vf:
        for size in (64, 1518):
            r = ci.run_int_chain(vf, size, pct=30, frames=300, burst=50)
            assert r.collector.errors == [] and r.collector.lost == {}
            rows = ci.hop_rows(r)
            assert len(rows) == 2 * 300 * 4
            one_frame = frame_time_ns(size)
            assert rows["latency_error_ns"].abs().max() <= one_frame, size
            assert (rows["occupancy_error"] == 0).all(), size
            assert (rows["int_ingress_ts_ns"] == rows["truth_enqueue_ns"]).all()
            # the path in order, the sink's own hop last
            east = rows[(rows.direction == "east") & (rows.frame == 0)]
            west = rows[(rows.direction == "west") & (rows.frame == 0)]
            assert list(east["node_id"]) == [1, 2, 3, 4] and list(west["node_id"]) == [4, 3, 2, 1]
            # not a vacuous match: INT-MD sees the queue at the 40G hop
            s = ci.hop_summary(r, rows).set_index(["direction", "hop"])
            assert s.loc[("east", 2), "int_latency_max_ns"] > 20 * frame_time_ns(size, 40e9)
            assert s.loc[("east", 2), "int_occupancy_max"] >= 20
            assert s.loc[("west", 3), "int_occupancy_max"] >= 20
            # hops + wires (with the frame as each hop grew it) = the tester's latency
            sums = ci.sum_rows(r)
            assert len(sums) == 600 and sums["difference_ns"].abs().max() <= one_frame
            # the tester gets every frame back as it sent it: INT-MD stripped
            rec = r.run.records
            mine = np.isin(rec["stream"], list(r.run.streams.values()))
            assert mine.sum() == 600 and set(rec["size"][mine]) == {size}


def test_grown_frames_on_the_wires(program, fair):
    with ci.int_md_chain(program, 3, fair) as vf:
        r = ci.run_int_chain(vf, 128, pct=10, frames=5)
        # source: shim + header + its 12 words; the transit 12 more
        assert ci.wire_sizes(r, "east") == [128, 128 + 16 + 48, 128 + 16 + 96]
        links = {(x["from_switch"], x["to_switch"]): x for x in r.run.links}
        assert links[(0, 1)]["bytes"] == 5 * (128 + 16 + 48)     # FCS counted


def test_tx_utilisation_is_the_ports_transmit_rate(program, fair):
    # 1518-byte frames at 50 % of 100G, windows of 4096 ns: the source's
    # EAST port sends 1514 + 16 bytes per frame (its own hop's 48 are
    # pushed after the count), one frame every 2 x 123.04 ns
    with ci.int_md_chain(program, 2, fair, util_window_log2_ns=12) as vf:
        r = ci.run_int_chain(vf, 1518, pct=50, frames=400, directions=("east",))
        util = np.array([p.hops[0].tx_utilization_mbps for p in r.paths("east")])
        expect = (1514 + 16) * 8 / (2 * frame_time_ns(1518)) * 1000      # Mb/s
        steady = util[100:]                      # after the first whole window
        assert (util[:10] == 0).all()            # no whole window yet
        assert steady.min() >= 0.9 * expect and steady.max() <= 1.1 * expect


def test_an_exhausted_hop_count_leaves_the_later_hops_out(program, fair):
    with ci.int_md_chain(program, 4, fair, max_hops=2) as vf:
        r = ci.run_int_chain(vf, 64, pct=10, frames=20, directions=("east",))
        paths = r.paths("east")
        assert len(paths) == 20
        for p in paths:
            assert p.stack.hops_exceeded and p.stack.remaining_hops == 0
            assert [h.node_id for h in p.hops] == [1, 2, 4]      # switch 3 added nothing
        with pytest.raises(ValueError, match="all 4 hops"):
            ci.hop_rows(r)
