"""simple_switch_grpc's command line: every option, and errors exit 2."""

from __future__ import annotations

import pytest

from p4scope.switch import daemon
from p4scope.switch.options import DEFAULT_GRPC_ADDR, UsageError, parse_args


@pytest.fixture
def prog(tmp_path):
    p = tmp_path / "x.json"
    p.write_text("{}")
    return str(p)


def test_typical_mininet_command_line(prog, tmp_path):
    o = parse_args(["-i", "1@s1-eth1", "-i", "2@s1-eth2", "--pcap", str(tmp_path),
                    "--nanolog", "ipc:///tmp/bm-0-log.ipc", "--device-id", "0", prog,
                    "--log-console", "--thrift-port", "9090", "--",
                    "--grpc-server-addr", "0.0.0.0:50051"])
    assert o.interfaces == [(1, "s1-eth1"), (2, "s1-eth2")]
    assert o.pcap_dir == str(tmp_path) and o.json_path == prog and o.log_console
    assert o.thrift_port == 9090 and o.grpc_server_addr == "0.0.0.0:50051"
    assert any("nanolog" in w for w in o.warnings)


def test_defaults_listen_on_loopback():
    o = parse_args(["--no-p4"])
    assert o.grpc_server_addr == DEFAULT_GRPC_ADDR == "127.0.0.1:9559"
    assert o.device_id == 0 and o.cpu_port is None and o.drop_port == 511
    assert o.priority_queues == 1 and o.log_level == "trace" and o.max_port_count == 512


def test_every_general_option(prog, tmp_path):
    log = tmp_path / "log.txt"
    o = parse_args(["-i", "3@veth0", "--interface=4@veth2", "-i5@veth4", "--pcap",
                    "--use-files", "2", "--packet-in", "ipc:///x", "--thrift-port", "9091",
                    "--device-id", "7", "--log-file", str(log), "-L", "info", "--log-flush",
                    "--log-file-max-size", "100", "--log-file-max-files", "2",
                    "--notifications-addr", "ipc:///n", "--debugger", "--debugger-addr", "x",
                    "--restore-state", "s", "--dump-packet-data", "64",
                    "--max-port-count", "16", prog])
    assert o.interfaces == [(3, "veth0"), (4, "veth2"), (5, "veth4")]
    assert o.pcap_dir == "." and o.use_files == 2 and o.thrift_port == 9091
    assert o.device_id == 7 and o.log_file == str(log) and o.log_level == "info"
    assert o.log_flush and o.log_file_max_size == 100 and o.log_file_max_files == 2
    assert o.dump_packet_data == 64 and o.max_port_count == 16
    assert len(o.warnings) >= 5
    assert parse_args(["--log-level=warn", "--no-p4"]).log_level == "warn"
    assert parse_args(["-Ldebug", "--no-p4"]).log_level == "debug"


def test_every_target_option(tmp_path):
    cert = tmp_path / "c.pem"  # only parsed here: PEM armour is all it needs
    cert.write_text("-----BEGIN CERTIFICATE-----\nx\n-----END CERTIFICATE-----\n"
                    "-----BEGIN PRIVATE KEY-----\nx\n-----END PRIVATE KEY-----\n")
    tm = tmp_path / "tm.json"
    tm.write_text('{"queue_depth": 100}')
    o = parse_args(["--no-p4", "--", "--grpc-server-addr", "127.0.0.1:50001",
                    "--grpc-server-ssl", "--grpc-server-cacert", str(cert),
                    "--grpc-server-cert", str(cert), "--grpc-server-key", str(cert),
                    "--grpc-server-with-client-auth", "--cpu-port", "255", "--drop-port", "510",
                    "--priority-queues", "8", "--max-mc-groups", "10", "--max-l1-entries", "11",
                    "--max-l2-entries", "12", "--disable-swap", "--dp-grpc-server-addr", "x:1",
                    "--tm-config", str(tm), "--ready-file", str(tmp_path / "ready"),
                    "--seed", "42"])
    assert o.grpc_server_addr == "127.0.0.1:50001" and o.grpc_server_ssl
    assert o.grpc_server_with_client_auth and o.cpu_port == 255 and o.drop_port == 510
    assert o.priority_queues == 8 and (o.max_mc_groups, o.max_l1_entries, o.max_l2_entries) == (
        10, 11, 12)
    assert o.tm_config == {"queue_depth": 100} and o.seed == 42


def test_no_p4_with_target_options_only():
    # BMv2's quirk: with --no-p4 the first word after -- is not a JSON file
    o = parse_args(["--no-p4", "--", "--cpu-port", "64"])
    assert o.cpu_port == 64 and o.json_path is None


def test_json_after_separator(prog):
    assert parse_args(["--", prog, "--cpu-port", "3"]).json_path == prog


def test_help_version():
    assert parse_args(["--help"]).action == "help"
    assert parse_args(["-v"]).action == "version"
    assert parse_args(["--json-version"]).action == "json-version"


@pytest.mark.parametrize("argv, text", [
    (["--bogus", "--no-p4"], "unrecognised general option '--bogus'"),
    (["--no-p4", "--", "--bogus"], "unrecognised target option"),
    (["--no-p4", "--cpu-port", "3"], "put it after '--'"),
    ([], "please give a BMv2 JSON file"),
    (["--no-p4", "-i", "veth0"], "PORT@INTERFACE"),
    (["--no-p4", "-i", "x@veth0"], "not a port number"),
    (["--no-p4", "-i", "1@a", "-i", "1@b"], "given twice"),
    (["--no-p4", "--device-id", "-1"], "device-id"),
    (["--no-p4", "--thrift-port", "70000"], "out of range"),
    (["--no-p4", "-L", "loud"], "not a log level"),
    (["--no-p4", "--log-console", "--log-file", "f"], "exclusive"),
    (["--no-p4", "--pcap", "/no/such/dir"], "does not exist"),
    (["--no-p4", "--device-id"], "needs a value"),
    (["--no-p4", "--log-console=1"], "takes no value"),
    (["/no/such.json"], "no JSON file"),
    (["a.json", "b.json"], "only one JSON"),
    (["--no-p4", "--", "--cpu-port", "0"], "0 is not a valid CPU port"),
    (["--no-p4", "-i", "5@v", "--", "--cpu-port", "5"], "also an interface"),
    (["--no-p4", "--", "--cpu-port", "511"], "drop port"),
    (["--no-p4", "--", "--priority-queues", "9"], "out of range"),
    (["--no-p4", "--", "--grpc-server-addr", "nohostport"], "HOST:PORT"),
    (["--no-p4", "--", "--grpc-server-addr", "h:99999"], "out of range"),
    (["--no-p4", "--", "--grpc-server-ssl"], "needs --grpc-server-cert"),
    (["--no-p4", "--", "--grpc-server-cert", "/no/file"], "no file"),
    (["--no-p4", "--", "--tm-config", "/no/file"], "cannot read"),
    (["--no-p4", "--", "extra"], "unexpected argument"),
    (["--no-p4", "--max-port-count", "1", "-i", "1@a", "-i", "2@b"], "exceed"),
])
def test_errors(argv, text):
    with pytest.raises(UsageError, match=text.replace("(", r"\(").replace(".", r"\.")
                       .replace("[", r"\[")):
        parse_args(argv)


def test_errors_exit_2(capsys):
    assert daemon.main(["--bogus"]) == 2
    err = capsys.readouterr().err
    assert "error: unrecognised general option '--bogus'" in err and "--help" in err
    assert daemon.main(["--no-p4", "--", "--cpu-port", "x"]) == 2


def test_help_and_versions_exit_0(capsys):
    assert daemon.main(["--help"]) == 0
    out = capsys.readouterr().out
    assert "127.0.0.1:9559" in out and "0.0.0.0" in out and "--grpc-server-addr" in out
    assert daemon.main(["--json-version"]) == 0
    assert capsys.readouterr().out.strip() == "2.24"
    assert daemon.main(["--version"]) == 0
    assert "p4scope switch" in capsys.readouterr().out


def test_subcommand_without_separator_is_lenient():
    o = parse_args(["--no-p4", "--cpu-port", "3"], strict_separator=False)
    assert o.cpu_port == 3


def test_p4scope_switch_subcommand_keeps_the_separator(monkeypatch):
    monkeypatch.setattr("sys.argv", ["p4scope", "switch", "--no-p4", "--", "--cpu-port", "3"])
    argv, strict = daemon.recover_argv("switch", ["--no-p4", "--cpu-port", "3"])
    assert argv == ["--no-p4", "--", "--cpu-port", "3"] and strict


def test_bad_traffic_manager_config_names_the_key(tmp_path):
    tm = tmp_path / "tm.json"
    tm.write_text('{"buffer": {"size_bytes": "lots"}}')
    with pytest.raises(UsageError, match="buffer.size_bytes"):
        parse_args(["--no-p4", "--", "--tm-config", str(tm)])
