"""MAC ageing in virtual time: the reference DUT's learnt entries (written
by the controller with the ageing time as their idle timeout) age by the
engine's clock, swept at the switch's interval of virtual time, and the
controller deletes what the sweep reports; wall time ages nothing. An
address caching trial with an ageing time shorter than the trial loses the
addresses it learnt, and the CLI refuses such an ageing time."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from p4scope.cli import app
from p4scope.control.apps.flooding import Flooding
from p4scope.control.apps.learning import L2Learning
from p4scope.experiments.params import ParamError, default_profiles
from p4scope.experiments.rfc2889.address import address_trial
from p4scope.experiments.rfc2889.ageing import VirtualAgeing
from p4scope.experiments.rfc2889.controller import VirtualController, Watch
from p4scope.experiments.rfc2889.params import Rfc2889Params
from p4scope.experiments.rfc2889.topology import BROADCAST_MAC, address_ports
from p4scope.experiments.testbed import VirtualSwitch, compile_dut, host_mac
from p4scope.experiments.tester.virtual import VirtualTestbed
from p4scope.experiments.traffic import Traffic, apply_profile

ROOT = Path(__file__).resolve().parents[2]
DUT = ROOT / "p4src" / "dut.p4"
PROFILE = default_profiles()["fair"]
LINE = 100e9
MS = 1_000_000
MAC = 0x02_0B_00_00_00_01
runner = CliRunner()


@pytest.fixture(scope="module")
def vs():
    with VirtualSwitch(compile_dut(DUT), PROFILE, 1, apply_profile=apply_profile) as switch:
        yield switch


def _learning_switch(vs, ageing_s: float) -> tuple[L2Learning, VirtualController]:
    """A fresh switch (time 0) flooding over ports 1..3, learning through
    the controller with `ageing_s`, the sweep on virtual time."""
    box = {}

    def configure(sw):
        Flooding(sw).domain([1, 2, 3])
        box["learning"] = L2Learning(sw, ageing_s=ageing_s).start()

    vs.sw.digests(0)
    vs.setup_switch = configure
    try:
        vs.reset(PROFILE, [], {})
    finally:
        vs.setup_switch = None
    learning = box["learning"]
    return learning, VirtualController(vs, learning, ageing=VirtualAgeing(vs))


def _smac_entries(vs) -> set[int]:
    return {next(iter(e.match.values())) for e in vs.sw.table("smac").entries()}


def _rx(vs, sid: int) -> dict[int, int]:
    with vs.locked() as e:
        return {int(r["rx_port"]): int(r["rx_frames"]) for r in e.stream_stats()
                if r["stream"] == sid and r.get("rx_port") is not None and r["rx_frames"]}


def test_a_learnt_entry_ages_after_the_ageing_time_of_virtual_time(vs):
    learning, ctl = _learning_switch(vs, ageing_s=0.5)
    tr = Traffic(vs)
    tr.add(2, 1, size=64, frames=1, rate_pct=100.0, line_rate_bps=LINE, src_mac=MAC,
           dst_mac=BROADCAST_MAC, name="learn")
    ctl.run_until(MS, Watch(0, 1.0, 1))
    assert learning.macs == {MAC: 2} and MAC in _smac_entries(vs)
    time.sleep(0.6)  # longer than the ageing time, of wall time: nothing ages
    # the sweep at 500 ms of virtual time: idle for just under 500 ms
    ctl.run_until(500 * MS + 1)
    assert MAC in _smac_entries(vs) and learning.stats.aged == 0 and ctl.aged == 0
    # the next sweep (100 ms later) reports it, the controller deletes it
    ctl.run_until(600 * MS + 1)
    assert learning.stats.aged == 1 and ctl.aged == 1
    assert MAC not in learning.macs and MAC not in _smac_entries(vs)
    # a frame to the address is flooded again
    sid = tr.add(1, 2, size=64, frames=1, rate_pct=100.0, line_rate_bps=LINE,
                 src_mac=host_mac(1), dst_mac=MAC, start_ns=700 * MS, name="to the aged")
    ctl.run_until(701 * MS, Watch(700 * MS, 1.0, 1))
    assert _rx(vs, sid) == {2: 1, 3: 1}


def test_an_address_that_keeps_sending_does_not_age(vs):
    learning, ctl = _learning_switch(vs, ageing_s=0.55)
    # one frame every 200 ms: each hit restarts the entry's idle time
    Traffic(vs).add(2, 1, size=64, frames=5, rate_fps=5.0, line_rate_bps=LINE, src_mac=MAC,
                    dst_mac=BROADCAST_MAC, name="keeps sending")
    ctl.run_until(1300 * MS, Watch(0, 200 * MS, 5))
    assert MAC in _smac_entries(vs) and learning.stats.aged == 0
    # idle since its last hit (800 ms, as the engine stamped it) for 600 ms
    # at the sweep of 1.4 s
    ctl.run_until(1400 * MS + 1)
    assert learning.stats.aged == 1 and MAC not in _smac_entries(vs)


def test_an_ageing_time_shorter_than_the_trial_loses_the_addresses(vs):
    bed = VirtualTestbed(vs, LINE, PROFILE)
    ports = address_ports([1, 2, 3, 4])
    # 20 addresses at 20 frames/s: each waits 1 s for its test frame
    kept = address_trial(bed, ports, 20, 20.0, 64, ageing_s=300.0)
    assert kept.passed and kept.aged == 0 and kept.learnt == 20 and kept.monitor_rx == 0
    lost = address_trial(bed, ports, 20, 20.0, 64, ageing_s=0.5)
    assert not lost.passed
    assert lost.aged >= 20  # every address learnt aged before its test frame
    assert lost.learn_rx == 20 and lost.monitor_rx >= 20  # so its test frame was flooded
    assert lost.row()["aged"] == lost.aged


def test_the_ageing_time_must_exceed_the_longest_address_trial():
    # 100 addresses at 20 frames/s, learnt then tested: 10 s
    p = Rfc2889Params(tests=("address_caching",), max_addresses=100, learn_fps=20.0)
    assert p.longest_address_trial()[0] == pytest.approx(10.0)
    with pytest.raises(ParamError, match="--ageing-s 10"):
        Rfc2889Params(tests=("address_caching",), max_addresses=100, learn_fps=20.0,
                      ageing_s=10.0).check()
    Rfc2889Params(tests=("address_caching",), max_addresses=100, learn_fps=20.0,
                  ageing_s=10.5).check()
    # the learning-rate search's slowest trial: 500 addresses at 100 frames/s
    with pytest.raises(ParamError, match="--ageing-s 9"):
        Rfc2889Params(tests=("address_learning",), learning_addresses=(100, 500),
                      learn_rate_resolution_fps=100.0, ageing_s=9.0).check()
    # no address test, no rule
    Rfc2889Params(tests=("full_mesh",), ageing_s=1.0).check()


@pytest.mark.parametrize("args, option", [
    (["--tests", "address_caching", "--ageing-s", "60"], "--ageing-s 60"),
    (["--tests", "address_learning", "--learning-addresses", "1000", "--ageing-s", "15"],
     "--ageing-s 15"),
])
def test_the_cli_refuses_a_short_ageing_time(tmp_path, args, option):
    r = runner.invoke(app, ["run", "rfc2889", *args, "--results", str(tmp_path),
                            "--no-progress"])
    assert r.exit_code == 2, r.output
    assert option in r.output and "RFC 2889" in r.output
    assert "Traceback" not in r.output
    assert not any(tmp_path.iterdir())


def test_the_report_says_the_ageing_time_exceeds_the_trials(tmp_path):
    r = runner.invoke(app, ["run", "rfc2889", "--tests", "address_caching", "--ports", "3",
                            "--max-addresses", "8", "--learn-fps", "20", "--ageing-s", "2",
                            "--program", str(DUT), "--results", str(tmp_path), "--run-id",
                            "ageing", "--no-progress"])
    assert r.exit_code == 0, r.output
    html = (tmp_path / "ageing" / "report.html").read_text()
    assert "The learnt entries age in virtual time" in html
    assert "RFC 2889 (address caching, s. 5.7) asks for an ageing time longer" in html
    assert "the longest address trial here lasted 0.8 s of virtual time" in html
