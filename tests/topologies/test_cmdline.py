"""The simple_switch_grpc argument vectors both switch kinds are started with."""

import sys
from pathlib import Path

from p4scope.topologies import cmdline
from p4scope.topologies.cmdline import SwitchCommand


def test_minimal_no_p4():
    c = SwitchCommand(ports=((2, "s1-eth2"), (1, "s1-eth1")), device_id=0, grpc_port=50051,
                      thrift_port=9090)
    assert c.args() == ["-i", "1@s1-eth1", "-i", "2@s1-eth2", "--device-id", "0",
                        "--thrift-port", "9090", "--log-console", "-L", "info", "--no-p4",
                        "--", "--grpc-server-addr", "127.0.0.1:50051"]


def test_full_vectors_for_both_kinds():
    c = SwitchCommand(ports=((1, "s3-eth1"), (2, "s3-eth2"), (3, "s3-eth3")), device_id=2,
                      grpc_port=50053, thrift_port=9092, program="build/dut.json", cpu_port=255,
                      log_level="warn", pcap_dir="/r/pcaps/s3", priority_queues=8,
                      extra_args=("--dump-packet-data", "64"), target_args=("--drop-port", "511"))
    words = ["-i", "1@s3-eth1", "-i", "2@s3-eth2", "-i", "3@s3-eth3", "--device-id", "2",
             "--thrift-port", "9092", "--log-console", "-L", "warn", "--pcap", "/r/pcaps/s3",
             "--dump-packet-data", "64", "build/dut.json",
             "--", "--grpc-server-addr", "127.0.0.1:50053", "--cpu-port", "255",
             "--priority-queues", "8", "--drop-port", "511"]
    assert cmdline.argv("bmv2", c, program=["simple_switch_grpc"]) == ["simple_switch_grpc", *words]
    assert cmdline.argv("p4scope", c, program=["p4scope", "switch"]) == ["p4scope", "switch", *words]


def test_log_off_has_no_log_options():
    c = SwitchCommand(ports=((1, "a"),), device_id=0, grpc_port=1, thrift_port=2, log_level="off")
    assert "--log-console" not in c.args() and "-L" not in c.args()


def test_default_programs():
    p = cmdline.p4scope_program()
    assert p[1] == "switch" and Path(p[0]).name == "p4scope"
    if (Path(sys.executable).parent / "p4scope").exists():
        assert p[0] == str(Path(sys.executable).parent / "p4scope")
    assert Path(cmdline.bmv2_program()[0]).name == "simple_switch_grpc"


def test_node_builds_the_vector_from_its_interfaces(tmp_path):
    """P4Switch.argv(): ports from the node's interfaces, ports from the run."""
    import pytest
    pytest.importorskip("mininet.node", reason="Mininet is not installed (scripts/setup.sh)")
    from p4scope.topologies.manifest import Manifest
    from p4scope.topologies.nodes import P4Switch
    from p4scope.topologies.spec import SwitchSpec

    class FakeIntf:
        def __init__(self, name):
            self.name = name

    sw = P4Switch.__new__(P4Switch)  # no shell: only the command line is wanted
    sw.name = "s1"
    sw.spec = SwitchSpec(name="s1", kind="bmv2", program="x.json", cpu_port=64, pcap=True,
                         device_id=3)
    sw.manifest = Manifest(run_dir=tmp_path, run_id="abc", boot_id="b", owner={})
    sw.intfs = {0: FakeIntf("lo"), 2: FakeIntf("s1-eth2"), 1: FakeIntf("s1-eth1")}
    sw.grpc_port, sw.thrift_port = 50060, 9100
    sw.program = ["/usr/local/bin/simple_switch_grpc"]
    assert sw.argv() == [
        "/usr/local/bin/simple_switch_grpc", "-i", "1@s1-eth1", "-i", "2@s1-eth2", "--device-id", "3",
        "--thrift-port", "9100", "--log-console", "-L", "info", "--pcap", str(tmp_path / "pcaps" / "s1"),
        str(Path("x.json").resolve()), "--", "--grpc-server-addr", "127.0.0.1:50060", "--cpu-port", "64"]
