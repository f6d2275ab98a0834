"""The collector port's traffic-manager settings: reports never take the
shared buffer the measured queue competes for, so a microburst measures the
same with a report per packet as without."""

import pytest

from p4scope.experiments import collector_port as cp
from p4scope.experiments.params import ParamError, Profile, default_profiles


def test_the_collector_port_keeps_up_with_reports_of_minimum_frames():
    # a 64 B frame (84 wire bytes) every 6.72 ns at 100 Gb/s, one report each
    assert cp.REPORT_MAX_BYTES == 202
    need = cp.min_rate_bps(100e9)
    assert need == pytest.approx(100e9 * 226 / 84)
    assert cp.RATE_BPS >= need
    with pytest.raises(ValueError, match="cannot keep up"):
        cp.port_tm(200e9, 256)


def test_reserve_holds_one_clone_of_the_largest_frame():
    assert cp.reserve_bytes(256) == 9216
    assert cp.reserve_bytes(1) == 9212
    assert cp.port_tm(100e9, 256) == {"rate_bps": 400_000_000_000, "reserved_bytes": 9216}


def test_profiles_take_the_reserve_out_of_the_shared_pool():
    p = default_profiles(buffer_bytes=1 << 20, cell_bytes=256)["fair"]
    assert p.reserved_bytes == 9216 and p.shared_bytes == (1 << 20) - 9216
    doc = p.tm_config(100e9)
    assert doc["ports"] == {"62": {"rate_bps": 400_000_000_000, "reserved_bytes": 9216}}
    with pytest.raises(ParamError, match="no shared buffer"):
        Profile("x", 4096, 1.0, {"mode": "fair"}, 256, ports={62: {"reserved_bytes": 9216}}).check()


def test_check_reserve():
    stats = [{"port": 31, "peak_pkts": 900, "peak_bytes": 10**6},
             {"port": 62, "peak_pkts": 1, "peak_bytes": 9212}]
    assert cp.check_reserve(stats, 9216, 256) == {"collector_peak_frames": 1,
                                                  "collector_peak_bytes": 9212}
    stats[1].update(peak_pkts=2, peak_bytes=9212 + 60)
    with pytest.raises(cp.ReportsTookSharedBuffer):
        cp.check_reserve(stats, 9216, 256)
    assert cp.check_reserve([], 0, 256)["collector_peak_frames"] == 0
