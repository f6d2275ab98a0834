"""A chain of reference DUTs in one virtual-time run (experiments.fabric):
per-layer latency measured by the tester on the first and last switch, and
the end-to-end latency equal to the hops' ground truth plus the wires."""

import dataclasses

import pytest


from p4scope.experiments import chain_latency as cl  # noqa: E402
from p4scope.experiments import testbed as tb  # noqa: E402
from p4scope.experiments.fabric import EAST, WEST, chain  # noqa: E402
from p4scope.experiments.linerate import frame_time_ns  # noqa: E402
from p4scope.experiments.params import default_profiles  # noqa: E402


@pytest.fixture(scope="module")
def program():
    return tb.compile_dut()


@pytest.fixture(scope="module")
def fair():
    return default_profiles()["fair"]


def slow_ports(profile, gbps):
    """The profile with the chain ports (WEST, EAST) at `gbps`."""
    rate = {"rate_bps": int(gbps * 1e9)}
    return dataclasses.replace(profile, ports={**profile.ports, WEST: rate, EAST: rate})


def test_end_to_end_latency_is_the_hops_plus_the_wires(program, fair):
    # switch 1 runs its chain ports at 40G: bursts from the 100G tester
    # queue there, so every hop's residence is its own
    profs = [fair, slow_ports(fair, 40), fair, fair]
    with chain(program, 4, fair, delay_ns=250, profiles=profs) as vf:
        for size in (64, 1518):
            run = cl.run_chain(vf, size, pct=30, frames=300, burst=50)
            check = cl.sum_check(run)
            assert len(check) == 600 and set(check["direction"]) == {"east", "west"}
            one_frame = frame_time_ns(size)
            assert check["difference_ns"].abs().max() <= one_frame, size
            hops = cl.hop_table(run)
            east = hops[hops["direction"] == "east"].set_index("hop")
            # the queue builds at the 40G hop (2nd east), not elsewhere
            assert east.loc[2, "residence_max_ns"] > 20 * frame_time_ns(size, 40e9)
            assert east.loc[1, "residence_max_ns"] <= 1
            # links measured from the traces: wire time at the sender's rate + delay
            assert east.loc[3, "wire_in_ns"] == pytest.approx(cl.wire_ns(size, 40e9) + 250)
            assert east.loc[2, "wire_in_ns"] == pytest.approx(cl.wire_ns(size, 100e9) + 250)
            assert (hops["wire_in_measured_ns"] - hops["wire_in_ns"]).abs().max() <= 1
            # the tester's latency is the truth's: first bit in to first bit out
            t = cl.tester_rows(run).set_index("direction")
            assert t.loc["east", "lat_max_ns"] == check[check.direction == "east"].latency_ns.max()
            assert (t["rx_frames"] == 300).all()


def test_layers_add_one_wire_and_delay_each(program, fair):
    rows, hops = cl.layer_latency(program, fair, layers=4, sizes=(64, 1518), pct=50, frames=50,
                                  delay_ns=1000, seed=3)
    assert len(rows) == 4 * 2 * 2 and (rows["rx_frames"] == 50).all()
    for size in (64, 1518):
        r = rows[rows["frame_size"] == size]
        for k in range(1, 5):
            lat = r[r["layers"] == k]["lat_avg_ns"]
            # no queueing at 50 %: k store-and-forward wires and k - 1
            # delays (times in whole ns: up to 1 ns of rounding per hop)
            assert lat.to_numpy() == pytest.approx([k * cl.wire_ns(size, 100e9) + (k - 1) * 1000] * 2,
                                                   abs=k)
    assert set(hops["layers"]) == {4} and len(hops) == 2 * 2 * 4
    table = cl.seed_table(rows)
    assert list(table.columns[:2]) == ["layer", "frame size (B)"] and len(table) == 8
    assert table.iloc[-1]["latency avg (us)"] == f"{rows['lat_avg_ns'].iloc[-1] / 1000:.3f}"


def test_same_seed_same_chain_run(program, fair):
    with chain(program, 3, fair, delay_ns=10, seed=7) as vf:
        assert (vf.first, vf.last) == ((0, WEST), (2, EAST))
        d = [cl.run_chain(vf, 512, 100, 200).digest for _ in range(2)]
        other = cl.run_chain(vf, 256, 100, 200).digest
    assert d[0] == d[1] != other


def test_chain_refuses_what_cannot_be_built(program, fair):
    with pytest.raises(ValueError, match="at least one switch"):
        chain(program, 0, fair)
    with pytest.raises(ValueError, match="needs 3 profiles"):
        chain(program, 3, fair, profiles=[fair])
    with pytest.raises(ValueError, match="delay"):
        chain(program, 2, fair, delay_ns=-1)
