"""Priority flow control through the engine's Python face: the traffic
manager's `pfc` section is checked (errors name the field, and the switch's
--tm-config turns them into exit 2), sources obey the pause frames the
switch sends (tm_pfc_stats and stream_stats say how long), and sources
that ignore them make the lossless priority lose."""

from __future__ import annotations

import json

import pytest

import p4scope_dataplane as dp

from p4scope.bench.engine import l2l3_json  # noqa: E402
from p4scope.switch import daemon  # noqa: E402

EGRESS = 31
PFC = {"priorities": [0], "ports": "1-4", "xoff_bytes": 20000, "xon_bytes": 10000,
       "headroom_bytes": 8192}


def tm(pfc=PFC, **buffer):
    return {"defaults": {"rate_bps": "100G"},
            "buffer": {"size_bytes": 400_000, "alpha": 1, **buffer}, "pfc": pfc}


@pytest.mark.parametrize("change, field", [
    ({"xoff_bytes": 500_000}, "pfc.xoff_bytes"),
    ({"xon_bytes": 30_000}, "pfc.xon_bytes"),
    ({"headroom_bytes": 200_000}, "pfc.headroom_bytes"),
    ({"priorities": [8]}, "pfc.priorities"),
    ({"quanta": 70_000}, "pfc.quanta"),
])
def test_a_bad_pfc_section_names_its_field(change, field):
    with pytest.raises(dp.ConfigError, match=field.replace(".", r"\.")):
        dp.tm_config_check(tm({**PFC, **change}))


def test_pfc_needs_a_buffer_and_any_queue_may_be_lossless():
    with pytest.raises(dp.ConfigError, match="pfc: needs a shared buffer"):
        dp.tm_config_check({"pfc": PFC})
    # without an engine the queues are not known: priority 3 is fine here
    dp.tm_config_check(tm({**PFC, "priorities": [3]}))
    e = dp.Engine(l2l3_json())  # one queue: priority 3 is none of them
    with pytest.raises(dp.ConfigError, match="pfc.priorities: priority 3 is not a queue"):
        e.tm_configure(tm({**PFC, "priorities": [3]}))


def test_the_switch_refuses_a_bad_pfc_file_with_status_2(tmp_path, capsys):
    f = tmp_path / "tm.json"
    f.write_text(json.dumps(tm({**PFC, "xoff_bytes": 10**9})))
    assert daemon.main(["--no-p4", "--", "--tm-config", str(f)]) == 2
    err = capsys.readouterr().err
    assert "pfc.xoff_bytes" in err and "above the buffer" in err and "Traceback" not in err


def incast(obey: bool):
    """Four ports at line rate into one, 600 frames of 1518 B each."""
    e = dp.Engine(l2l3_json(), seed=1)
    e.tm_configure(tm(cell_bytes=256))
    e.table_add("ingress.ipv4_lpm", "ingress.set_nhop", [("lpm", (10 << 24) | (255 << 8), 24)],
                [1, EGRESS])
    e.table_add("ingress.forward", "ingress.set_dmac", [1], [0x020000000031])
    for port in range(1, 5):
        e.add_stream(port, size=1518, frames=600, dst_ip=(10 << 24) | (255 << 8) | 1,
                     priority=0, obey_pause=obey, name=f"p{port}")
    e.run(drain=True)
    return e


def test_sources_that_obey_lose_nothing_and_say_how_long_they_waited():
    e = incast(True)
    rows = e.stream_stats()
    assert all(r["lost"] == 0 and r["rx_frames"] == 600 for r in rows)
    assert all(r["pause_frames"] > 0 and r["paused_ns"] > 0 for r in rows)
    groups = {g["port"]: g for g in e.tm_pfc_stats()}
    assert sorted(groups) == [1, 2, 3, 4]
    for r in rows:
        g = groups[r["tx_port"]]
        assert g["xoff_frames"] > 0 and g["xon_frames"] > 0 and g["drops"] == 0
        assert 0 < g["peak_headroom_bytes"] <= 8192
        # the switch's count of the pause it asked for is what the source obeyed
        assert g["paused_ns"] == pytest.approx(r["paused_ns"], rel=0.01)
    assert not any(q["drops"] for q in e.tm_queue_stats())


def test_sources_that_ignore_pause_overrun_the_headroom():
    e = incast(False)
    assert sum(r["lost"] for r in e.stream_stats()) > 100
    q = next(q for q in e.tm_queue_stats() if q["port"] == EGRESS)
    assert set(q["drops"]) == {"headroom"}
    assert all(r["pause_frames"] == 0 for r in e.stream_stats())


def test_a_stream_s_priority_is_checked():
    e = dp.Engine(l2l3_json())
    with pytest.raises(dp.ConfigError, match="priority 9 is out of range"):
        e.add_stream(1, line_rate_bps=100e9, frames=1, priority=9)


@pytest.mark.parametrize("obey", [True, False])
def test_fabric_sources_obey_pause_as_the_tester_s_do(obey):
    """A switch run as a fabric of one: its sources keep their priority and
    obey the switch's pause frames exactly as the single-switch tester's."""
    e = dp.Engine(l2l3_json(), seed=1)
    e.tm_configure(tm(cell_bytes=256))
    e.table_add("ingress.ipv4_lpm", "ingress.set_nhop", [("lpm", (10 << 24) | (255 << 8), 24)],
                [1, EGRESS])
    e.table_add("ingress.forward", "ingress.set_dmac", [1], [0x020000000031])
    fabric = dp.Fabric([e], 1)
    for port in range(1, 5):
        fabric.add_stream(0, port, size=1518, frames=600, dst_ip=(10 << 24) | (255 << 8) | 1,
                          priority=0, obey_pause=obey, name=f"p{port}")
    fabric.run(drain=True)
    rows = fabric.stream_stats()
    lost = sum(r["lost"] for r in rows)
    if obey:
        assert lost == 0 and all(r["pause_frames"] > 0 for r in rows)
    else:
        assert lost > 100 and all(r["pause_frames"] == 0 for r in rows)
