"""The embedded switch: the DUT configured over P4Runtime, in process."""

import pytest


from p4scope.control.packets import udp_frame  # noqa: E402
from p4scope.experiments import testbed as tb  # noqa: E402
from p4scope.experiments.params import default_profiles  # noqa: E402


@pytest.fixture(scope="module")
def program():
    return tb.compile_dut()


def test_configured_over_p4runtime_and_reset(program):
    assert len(program.info["json_sha256"]) == 64
    with tb.VirtualSwitch(program, default_profiles()["fair"]) as vs:
        assert vs.address.startswith("127.0.0.1:")
        vs.reset(flows=[tb.Flow(1, 31), tb.Flow(2, 31)],
                 watch={31: tb.TelemetryConfig(burst_on=1000, burst_off=500)})
        f1 = udp_frame(dst_mac=tb.host_mac(31), src_mac=tb.host_mac(1), size=100)
        f2 = udp_frame(dst_mac=tb.host_mac(31), src_mac=tb.host_mac(2), size=300)
        with vs.locked() as e:
            outs = e.process([(1, f1, 1000), (2, f2, 2000), (2, f2, 3000)])
        assert [(p, len(d)) for p, d, _ in outs if p == 31] == [(31, 100), (31, 300), (31, 300)]
        # interval reports (one per microsecond interval) leave on the collector port
        from p4scope.control.apps.collector import Collector

        col = Collector(udp_port=tb.COLLECTOR_UDP)
        assert col.feed_frames([d for p, d, _ in outs if p == tb.COLLECTOR_PORT]) == 2
        assert [iv.port for iv in col.intervals] == [31, 31]
        # ... and become the run's instrument series (the path taken when the
        # engine hands over the collector port's frames in virtual time)
        from p4scope.experiments import instrument

        seen = instrument.from_collector("c", col, interval_log2_us=0)
        assert list(seen.series["kind"]) == ["interval_max", "interval_max"]
        assert list(seen.series["t_ns"]) == [1000, 2000]  # the frames at 1 and 2 us
        assert seen.bursts.empty
        assert vs.pair_counters(31, [1, 2]) == {1: (100, 1), 2: (600, 2)}
        assert vs.pair_counters(31, [1, 2], "tel_offered") == {1: (100, 1), 2: (600, 2)}
        # no learning digests: the source MACs are static entries
        with vs.locked() as e:
            assert e.take_digests() == []
        vs.reset()  # a fresh engine, same configuration
        assert vs.pair_counters(31, [1, 2]) == {1: (0, 0), 2: (0, 0)}
        with vs.locked() as e:
            outs = e.process([(2, f2, 10)])
        assert [p for p, _, _ in outs if p != tb.COLLECTOR_PORT] == [31]
        assert len(vs.sw.table("tel_port").entries()) == 1


def test_compile_dut_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError):
        tb.compile_dut(tmp_path / "nope.p4")


def test_the_dut_json_is_read_once_however_many_cases_ask(monkeypatch):
    """Every case asks the DUT's depth unit and clock: its JSON (hundreds
    of kB) is parsed once, not per case."""
    import json
    from types import SimpleNamespace

    from p4scope.experiments.testbed import DutProgram

    doc = {"field_aliases": [["p4scope.enq_qbytes", ["x", "y"]]]}
    dut = DutProgram(SimpleNamespace(device_config=json.dumps(doc).encode()), "dut.p4")
    parsed = []
    loads = json.loads
    monkeypatch.setattr(json, "loads", lambda s, *a, **k: parsed.append(1) or loads(s, *a, **k))
    assert [dut.byte_depths for _ in range(5)] == [True] * 5
    assert [dut.ns_clock for _ in range(5)] == [False] * 5
    assert len(parsed) == 1
