"""Link failover (seed 004): the controller hears port events in virtual
time and rewrites the LAG after its reaction delay; members with P4Runtime
watch ports fail over in the data plane at once; `p4scope run lag-failover`
measures both, and data-plane failover loses fewer frames."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from p4scope.cli import app


DUT = Path(__file__).resolve().parents[2] / "p4src" / "dut.p4"
runner = CliRunner()
A, B = 11, 12
SERVER_MAC, SERVER_IP = 0x02_00_00_00_01_00, 0x0A_00_01_00


@pytest.fixture(scope="module")
def vs():
    from p4scope.experiments.params import default_profiles
    from p4scope.experiments.testbed import VirtualSwitch, compile_dut
    from p4scope.experiments.traffic import apply_profile

    with VirtualSwitch(compile_dut(DUT), default_profiles()["fair"], 1,
                       apply_profile=apply_profile) as v:
        yield v


def _lag(vs, watch: bool, clients=(1, 2, 3, 4)):
    """A fresh engine, LAG 1 over A and B written by the controller; returns its Lags."""
    from p4scope.control.apps.lag import Lags
    from p4scope.experiments.testbed import host_mac

    made = {}

    def write(sw):
        sw.insert([sw.table("smac").entry({"hdr.ethernet.src_addr": host_mac(c)}, "smac_hit",
                                          port=c) for c in clients])
        made["lags"] = Lags(sw, watch_ports=watch)
        made["lags"].create(1, [A, B])
        sw.insert([sw.table("dmac").entry({"hdr.ethernet.dst_addr": SERVER_MAC}, "forward_lag",
                                          lag_id=1)])

    vs.setup_switch = write
    vs.reset(None, [], {})
    vs.setup_switch = None
    return made["lags"]


def _clients(e, clients=(1, 2, 3, 4), frames=None, duration_ns=None):
    """Each client at 20 % of 100G in 1518 B frames (a frame every 615.2 ns)."""
    from p4scope.experiments.testbed import host_ip, host_mac

    for c in clients:
        e.add_stream(c, size=1518, rate_pct=20, line_rate_bps=100e9, start_ns=50 * c,
                     frames=frames, duration_ns=duration_ns, dst_mac=SERVER_MAC,
                     dst_ip=SERVER_IP, src_mac=host_mac(c), src_ip=host_ip(c),
                     sport=40000 + c, dport=5001)


def _ports_used(e):
    return {r["rx_port"] for r in e.stream_stats() if r["rx_frames"]}


def test_the_controller_rewrites_the_lag_its_reaction_delay_after_a_port_event(vs):
    from p4scope.experiments.lag_failover.controller import LinkController

    lags = _lag(vs, watch=False)
    with vs.locked() as e:
        _clients(e, duration_ns=100_000)
        e.schedule_port_status(A, False, 30_000)
        e.schedule_port_status(A, True, 60_000)
    ctrl = LinkController(vs, lags.link_changed, 7_000)
    ctrl.run_until(100_000)
    assert [(r.event_ns, r.port, r.up, r.acted_ns) for r in ctrl.reactions] == [
        (30_000, A, False, 37_000), (60_000, A, True, 67_000)]
    assert lags.lags[1] == [A, B] and lags.down == set()
    with vs.locked() as e:
        e.run(until_ns=110_000)
        lost = sum({r["stream"]: r["lost"] for r in e.stream_stats()}.values())
        tx_down = e.link_drop_stats()[A]["tx_down"]
    # what A carried for the 7 us until the controller acted: its clients' frames
    assert lost == tx_down > 0
    assert _ports_used_of(vs) == {A, B}


def _ports_used_of(vs):
    with vs.locked() as e:
        return _ports_used(e)


def test_watch_ports_written_over_p4runtime_fail_over_in_the_data_plane_at_once(vs):
    from p4scope.control.entities import Group

    lags = _lag(vs, watch=True)
    # the group reads back with each member watching its own port
    (g,) = [x for x in vs.sw.action_profile("lag_select").groups() if x.group_id == 1]
    assert isinstance(g, Group)
    assert sorted(g.watch_ports.values()) == [A, B]
    assert {g.watch_ports[m] for m, _ in g.members} == {A, B}
    with vs.locked() as e:
        _clients(e, duration_ns=100_000)
        e.schedule_port_status(A, False, 30_000)
        e.run(until_ns=30_000)
        assert _ports_used(e) == {A, B}, "both members carry clients before"
        assert not e.port_is_up(A)
        e.record_rx(True)
        e.run(until_ns=120_000)
        after = set(e.rx_records()["port"])
        e.record_rx(False)
        lost = sum({r["stream"]: r["lost"] for r in e.stream_stats()}.values())
        # no controller acted: the selector skipped A by itself, losing at
        # most the frame A held when its link went down
        assert after == {B}
        assert lost == e.link_drop_stats().get(A, {}).get("tx_down", 0) <= 1
    assert lags.lags[1] == [A, B], "the controller never rewrote the group"


@pytest.fixture(scope="module")
def small_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("lagfo")
    r = runner.invoke(app, ["run", "lag-failover", "--clients", "2,3",
                            "--policies", "ip-dst,round-robin,l2-l4", "--iterations", "2",
                            "--interval-us", "60", "--reaction-us", "5", "--throughput-us", "40",
                            "--warmup-us", "10", "--bin-us", "5", "--program", str(DUT),
                            "--results", str(tmp), "--run-id", "lf", "--no-progress"])
    assert r.exit_code == 0, r.output
    return tmp / "lf"


def test_data_plane_failover_loses_fewer_frames_than_the_controller(small_run):
    out = pd.read_parquet(small_run / "lag_failover_outage.parquet")
    ok = out[out["supported"]]
    down = ok[ok["up"] == False]  # noqa: E712
    lost = down.groupby(["policy", "clients", "failover"])["lost_frames"].sum().unstack()
    assert (lost["dataplane"] < lost["controller"]).all(), lost
    # controller failover costs about the reaction delay of what the pulled member carried
    ctl = down[down["failover"] == "controller"]
    assert (ctl["recovery_ns"] <= 5_000 + 1_000).all() and (ctl["recovery_ns"] > 0).any()
    restored = ok[ok["up"] == True]  # noqa: E712
    assert (restored["lost_frames"] == 0).all(), "putting a member back loses nothing"
    ev = pd.read_parquet(small_run / "lag_failover_events.parquet")
    assert set(ev["event"]) == {"A down", "A up", "B down", "B up"}
    assert (ev.loc[ev["failover"] == "controller", "controller_acted_ns"]
            == ev.loc[ev["failover"] == "controller", "event_ns"] + 5_000).all()


def test_the_seed_tables_and_what_the_dut_cannot_do(small_run):
    thr = pd.read_parquet(small_run / "lag_failover_throughput.parquet").set_index(
        ["policy", "clients"])
    # one IPv4 destination: every client hashes to the same member
    assert thr.loc[("ip-dst", 2), "members_used"] == 1
    assert thr.loc[("ip-dst", 2), "trunk_gbps"] == pytest.approx(100, rel=0.02)
    assert not thr.loc[("round-robin", 2), "supported"]
    assert "round robin needs state" in thr.loc[("round-robin", 2), "note"]
    csv = pd.read_csv(small_run / "lag_failover_throughput.csv")
    assert list(csv["Policy"])[:2] == ["IP destination", "round robin"]
    assert "2 clients trunk (Gbit/s)" in csv and "3 clients trunk (Gbit/s)" in csv
    rec = pd.read_csv(small_run / "lag_failover_recovery.csv")
    assert {"A down outage (us)", "B down recovery (us)", "Mean outage per event (us)"} <= set(
        rec.columns)
    meta = json.loads((small_run / "run.json").read_text())
    assert meta["status"] == "complete"
    assert meta["parameters"]["lag_failover"]["policies_detail"]["ip-dst"]["defines"] == {
        "LAG_POLICY_IP_DST": "1"}
    assert (small_run / "figures" / "lag_failover_over_time.png").stat().st_size > 1000
    assert "Link aggregation: trunk throughput and failover" in (
        small_run / "report.html").read_text()


@pytest.mark.parametrize("args, says", [
    (["--members", ""], "--members: a LAG with no members"),
    (["--members", "11,70"], "--members: port 70 does not exist"),
    (["--members", "2,11"], "--members: port 2 is a client's"),
    (["--policies", "hash"], "--policies hash: unknown"),
    (["--reaction-us", "900"], "--reaction-us 900.0"),
])
def test_bad_configurations_exit_2_naming_the_option(tmp_path, args, says):
    r = runner.invoke(app, ["run", "lag-failover", *args, "--results", str(tmp_path)])
    assert r.exit_code == 2, r.output
    assert says in r.output
    assert "Traceback" not in r.output
    assert not any(tmp_path.iterdir()), "nothing started"
