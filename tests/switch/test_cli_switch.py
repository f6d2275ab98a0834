"""BMv2's run-time API and `p4scope switch-cli`: queues, mirroring,
multicast, registers, counters, meters, device info, a piped commands
file, and the daemon's --thrift-port."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest
from finsy.proto import p4r

from tests.switch import sw_program as program
from p4scope.switch.thrift.handler import RuntimeApi
from p4scope.switch.thrift.server import RuntimeServer
from tests.switch.sw_entities import eth

CLI_MODULE = "p4scope.control.switch_cli.main"  # the `p4scope switch-cli` command

MAC1 = "00:00:00:00:00:01"


def test_queue_depth_drops_what_does_not_fit(cli_switch):
    cli_switch.cli(f"table_add fwd forward {MAC1} => 2\n")
    cli_switch.device.receive([(1, eth(1))] * 10)
    assert len(cli_switch.sent) == 10  # 64 packets fit by default
    cli_switch.sent.clear()
    out = cli_switch.cli("set_queue_depth 4 2\n")
    assert "Error" not in out and "Invalid" not in out
    cli_switch.device.receive([(1, eth(1))] * 10)
    assert len(cli_switch.sent) == 4
    assert cli_switch.device.dataplane.stats()["dropped_queue"] == 6
    cli_switch.cli("set_queue_depth 64\n")  # all queues
    cli_switch.sent.clear()
    cli_switch.device.receive([(1, eth(1))] * 10)
    assert len(cli_switch.sent) == 10


def test_queue_rate_spaces_departures(cli_switch):
    cli_switch.cli(f"table_add fwd forward {MAC1} => 2\nset_queue_rate 1000 2\n")
    out = cli_switch.device.dataplane.process([(1, eth(1), 1_000)] * 3)
    assert [t for _, _, t in out] == [1_000, 1_001_000, 2_001_000]  # 1 ms apart at 1000 pps


def test_queue_settings_survive_a_new_pipeline(cli_switch_p4rt, ctl):
    cli_switch_p4rt.cli("set_queue_depth 3 2\n")
    ctl.set_pipeline(program.p4info(), program.json_text().encode())
    cli_switch_p4rt.cli(f"table_add fwd forward {MAC1} => 2\n")
    cli_switch_p4rt.sent.clear()
    cli_switch_p4rt.device.receive([(1, eth(1))] * 10)
    assert len(cli_switch_p4rt.sent) == 3


def test_mirroring_session_used_by_clone(cli_switch):
    # mirror(port) forwards to `port` and clones (I2E) to session 5
    out = cli_switch.cli(f"mirroring_add 5 9\ntable_add fwd mirror {MAC1} => 2\nmirroring_get 5\n")
    assert "MirroringSessionConfig(port=9, mgid=None)" in out
    assert sorted(p for p, _ in cli_switch.inject(1, eth(1))) == [2, 9]
    out = cli_switch.cli("mirroring_delete 5\nmirroring_get 5\nmirroring_delete 5\n")
    assert out.count("Invalid mirroring operation (SESSION_NOT_FOUND)") == 2
    assert [p for p, _ in cli_switch.inject(1, eth(1))] == [2]
    # a session to a multicast group
    cli_switch.cli("mc_mgrp_create 7\nmc_node_create 0 3 4\nmc_node_associate 7 0\nmirroring_add_mc 5 7\n")
    assert sorted(p for p, _ in cli_switch.inject(1, eth(1))) == [2, 3, 4]


def test_multicast_group_replicates(cli_switch):
    out = cli_switch.cli("mc_mgrp_create 1\n"
                 "mc_node_create 0 1 2\n"
                 "mc_node_create 1 3\n"
                 "mc_node_associate 1 0\n"
                 "mc_node_associate 1 1\n"
                 f"table_add fwd flood {MAC1} => 1\n"
                 "mc_dump\n")
    assert "Creating multicast group 1" in out
    assert "Creating node with rid 0 , port map 110 and lag map " in out
    assert "node was created with handle 1" in out
    assert "mgrp(1)\n  -> (L1h=0, rid=0) -> (ports=[1, 2], lags=[])\n" \
           "  -> (L1h=1, rid=1) -> (ports=[3], lags=[])" in out
    assert sorted(p for p, _ in cli_switch.inject(4, eth(1))) == [1, 2, 3]
    cli_switch.cli("mc_node_update 0 5\nmc_node_dissociate 1 1\n")
    assert sorted(p for p, _ in cli_switch.inject(4, eth(1))) == [5]
    # LAGs: the member BMv2 picks is (0xFF % size): ports 6, 7 -> 7
    cli_switch.cli("mc_set_lag_membership 2 6 7\nmc_node_update 0 5 | 2\n")
    assert sorted(p for p, _ in cli_switch.inject(4, eth(1))) == [5, 7]
    out = cli_switch.cli("mc_node_associate 1 0\nmc_node_associate 9 1\nmc_node_destroy 42\n"
                 "mc_node_create 0 x\n")
    assert "Invalid PRE operation (ERROR)" in out  # already associated
    assert "Invalid PRE operation (INVALID_MGRP_HANDLE)" in out
    assert "Invalid PRE operation (INVALID_L1_HANDLE)" in out
    assert "Error: 'x' is not a valid port number" in out
    cli_switch.cli("mc_node_destroy 0\nmc_mgrp_destroy 1\n")
    assert cli_switch.inject(4, eth(1)) == []


def test_registers_counters_meters(cli_switch_p4rt, ctl, schema):
    out = cli_switch_p4rt.cli("register_write scratch 2 0xdeadbeef\nregister_read scratch 2\n"
                      "register_read IngressImpl.scratch 99\nregister_read nope 1\n")
    assert "scratch[2]= 3735928559" in out
    assert "Invalid register operation (INVALID_INDEX)" in out
    assert "Error: Invalid register name (nope)" in out
    # P4Runtime reads the same register cell
    reg = p4r.RegisterEntry(register_id=schema.registers.find("scratch").id)
    reg.index.index = 2
    (r,) = ctl.read(p4r.Entity(register_entry=reg))
    assert r.register_entry.data.bitstring == bytes.fromhex("deadbeef")
    out = cli_switch_p4rt.cli("register_reset scratch\nregister_read scratch\n")
    assert "scratch= " + ", ".join(["0"] * 16) in out
    out = cli_switch_p4rt.cli("counter_write port_packets 3 7 700\ncounter_read port_packets 3\n"
                      "counter_reset port_packets\ncounter_read port_packets 3\n"
                      "counter_read port_packets 8\n")
    assert "port_packets[3]= (700 bytes, 7 packets)" in out
    assert "port_packets[3]= (0 bytes, 0 packets)" in out
    assert "Invalid counter operation (INVALID_INDEX)" in out
    out = cli_switch_p4rt.cli("meter_set_rates rate_meter 1 0.5:100 1:200\nmeter_get_rates rate_meter 1\n"
                      "meter_set_rates rate_meter 1 2:100 1:200\nmeter_set_rates rate_meter 1 1\n")
    assert "0: info rate = 0.5, burst size = 100\n1: info rate = 1.0, burst size = 200" in out
    assert "Invalid meter operation (INVALID_INFO_RATE_VALUE)" in out
    assert "Error: Invalid number of rates, expected 2 but got 1" in out
    # P4Runtime sees the meter's config in its own units (per second)
    me = p4r.MeterEntry(meter_id=schema.meters.find("rate_meter").id)
    me.index.index = 1
    (m,) = ctl.read(p4r.Entity(meter_entry=me))
    assert (m.meter_entry.config.cir, m.meter_entry.config.pburst) == (500_000, 200)


def test_switch_info_ports_and_program(cli_switch, tmp_path):
    out = cli_switch.cli("switch_info\nshow_ports\ntable_info fwd\nshow_actions\n"
                 f"write_config_to_file {tmp_path / 'cfg.json'}\nget_time_elapsed\n")
    assert "device_id                : 0" in out
    assert f"thrift_port              : {cli_switch.port}" in out
    assert "    1            veth1            UP" in out
    assert "IngressImpl.fwd                [implementation=None, mk=ethernet.dst(exact, 48)]" in out
    assert "IngressImpl.forward            [port(9)]" in out
    assert (tmp_path / "cfg.json").read_text() == program.json_text()
    out = cli_switch.cli("port_add veth9 9\n")
    assert "Invalid device manager operation (ERROR)" in out


def test_reset_state_keeps_program(cli_switch):
    cli_switch.cli(f"table_add fwd forward {MAC1} => 3\nregister_write scratch 1 5\nreset_state\n")
    out = cli_switch.cli("table_num_entries fwd\nregister_read scratch 1\n")
    assert "RuntimeCmd: 0" in out and "scratch[1]= 0" in out
    assert "Entry has been added with handle 0" in cli_switch.cli(f"table_add fwd forward {MAC1} => 3\n")
    assert cli_switch.inject(1, eth(1)) == [(3, eth(1))]


def test_piped_commands_file(cli_switch, tmp_path):
    """`p4scope switch-cli < commands.txt`, as people feed simple_switch_CLI."""
    cmds = tmp_path / "commands.txt"
    cmds.write_text(f"# forwarding\ntable_add fwd forward {MAC1} => 3\n\n"
                    "table_add fwd forward 00:00:00:00:00:02 => 4\n"
                    "table_add nope drop 1 =>\n"
                    "register_write scratch 0 42\nregister_read scratch 0\n")
    env = dict(os.environ)
    with open(cmds) as stdin:
        p = subprocess.run([sys.executable, "-m", CLI_MODULE, "--thrift-port", str(cli_switch.port)],
                           stdin=stdin, capture_output=True, text=True, timeout=60, env=env)
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("Obtaining JSON from switch...\nDone\n")
    assert p.stdout.count("Entry has been added with handle") == 2
    assert "Error: Invalid table name (nope)" in p.stdout
    assert "scratch[0]= 42" in p.stdout
    assert cli_switch.inject(1, eth(1)) == [(3, eth(1))]
    # the same file as an argument, failing on the bad command
    p = subprocess.run([sys.executable, "-m", CLI_MODULE, "--thrift-port",
                        str(cli_switch.port), "--fail-on-error", str(cmds)],
                       capture_output=True, text=True, timeout=60, env=env)
    assert p.returncode == 1
    assert "Invalid table operation (DUPLICATE_ENTRY)" in p.stdout


def test_cli_without_a_switch_says_so():
    from p4scope.control.switch_cli.main import main
    import io
    import contextlib
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main(["--thrift-port", "1"]) == 1
    assert "Could not connect to thrift client on port 1" in buf.getvalue()


def test_server_refuses_non_loopback_unless_asked(cli_switch):
    with pytest.raises(ValueError, match="loopback"):
        RuntimeServer(RuntimeApi(cli_switch.device), "0.0.0.0", 0)
    RuntimeServer(RuntimeApi(cli_switch.device), "0.0.0.0", 0, allow_remote=True)  # no bind yet


def test_daemon_serves_thrift_port(tmp_path):
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    json_path = tmp_path / "basic.json"
    json_path.write_text(program.json_text())
    proc = subprocess.Popen([sys.executable, "-m", "p4scope.switch.daemon", str(json_path),
                             "--thrift-port", str(port), "--",
                             "--grpc-server-addr", "127.0.0.1:0"],
                            stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 30
        line = ""
        while time.monotonic() < deadline:
            line = proc.stderr.readline()
            if "ready:" in line or not line:
                break
        assert f"Thrift on 127.0.0.1:{port}" in line
        p = subprocess.run([sys.executable, "-m", CLI_MODULE, "--thrift-port",
                            str(port)], input=f"table_add fwd forward {MAC1} => 3\n",
                           capture_output=True, text=True, timeout=60)
        assert "Entry has been added with handle 0" in p.stdout
    finally:
        proc.terminate()
        proc.wait(timeout=10)
