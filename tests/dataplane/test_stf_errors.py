"""A bad STF file is an error naming its line (FILE:LINE: error: ..., exit 1),
as p4c's STF parser and simple_switch_CLI reject it: unknown commands,
malformed arguments, values wider than their field, text that is not UTF-8."""

import subprocess
import sys

import pytest
from tests.dataplane.programs import DROP, FWD, ethernet_program, key, table

from p4scope.commands import stf

PROG = ethernet_program(
    [FWD, DROP],
    [table("ingress.by_type", 0, [key("ethernet", "type")], [0, 1], ["fwd", "drop"], default=1,
           next_tables={"fwd": "ingress.by_dst", "drop": "ingress.by_dst"}),
     table("ingress.by_dst", 1, [key("ethernet", "dst", "lpm")], [0, 1], ["fwd", "drop"],
           match_type="lpm", default=1)],
    "ingress.by_type")
PKT = "0000000000AA 0000000000BB 0800 0102"


def error_of(text: str):
    r = stf.run_stf(PROG, text)
    assert not r.passed and r.error is not None, r.messages
    return r.error.line, r.error.message


@pytest.mark.parametrize("text, line, message", [
    ("wait\nfoo bar\n", 2, "unknown command 'foo'"),
    ("packet 1 0102\nthis is garbage\n", 2, "unknown command 'this'"),
    ("packet x 0102\n", 1, "'packet': the port must be a decimal number, not 'x'"),
    ("packet 1\n", 1, "'packet' needs the packet's bytes in hex"),
    ("packet 1 01 0g\n", 1, "packet data must be hex digits: 'g' is not"),
    ("packet 1 010\n", 1, "packet data must be whole bytes (an even number of hex digits)"),
    ("# c\n\nexpect 1 01$02\n", 3, "expected data must be hex digits or '*', optionally ending in '$': '$' is not"),
    ("add by_type type:0x08zz fwd(port:1)\n", 1, "key type: '0x08zz' is not a number"),
    ("add by_type type:0x0800 fwd(port:one)\n", 1, "action argument port: 'one' is not a number"),
    ("add by_type type:0x0800 fwd(port:1) junk\n", 1, "bad action call in 'add by_type type:0x0800 fwd(port:1) junk'"),
    ("setdefault by_type 7 drop()\n", 1, "'setdefault' takes a table and an action call, not '7'"),
    ("remove some\n", 1, "'remove' takes one argument, 'all'"),
    ("wait 5\n", 1, "'wait' takes no arguments"),
    ("mc_mgrp_create\n", 1, "'mc_mgrp_create' takes 1 argument, got 0"),
    ("mirroring_add 1 2 3\n", 1, "'mirroring_add' takes 2 arguments, got 3"),
    ("mc_node_create 1 x\n", 1, "'mc_node_create' argument 2: 'x' is not a number"),
    ("meter_array_set_rates m 0.1\n", 1, "'meter_array_set_rates' argument 2: '0.1' is not a meter rate RATE:BURST"),
])
def test_malformed_lines_are_errors_naming_the_line(text, line, message):
    assert error_of(text) == (line, message)


@pytest.mark.parametrize("text, message", [
    # simple_switch_CLI: a value must fit the field's bytes ("Parameter is too large")
    ("add by_type type:0x10800 fwd(port:1)", "key ethernet.type: 0x10800 does not fit in bit<16>"),
    ("add by_type type:0x0800 fwd(port:0x10000)", "action argument port: 0x10000 does not fit in bit<9>"),
    ("add by_dst dst:0x1000000000000/48 fwd(port:1)", "key ethernet.dst: 0x1000000000000/48 does not fit in bit<48>"),
    # BMv2: BAD_MATCH_KEY
    ("add by_dst dst:0xAA/49 fwd(port:1)", "key ethernet.dst: prefix length 49 of 0xAA/49 is longer than bit<48>"),
])
def test_values_wider_than_their_field_are_errors(text, message):
    assert error_of(f"packet 1 {PKT}\n{text}\n") == (2, message)


def test_bits_above_the_width_within_the_last_byte_are_dropped_as_bmv2_does():
    r = stf.run_stf(PROG, f"add by_type type:0x0800 fwd(port:0x203)\n"
                          f"add by_dst dst:0x0000000000AA/48 fwd(port:0x203)\n"
                          f"packet 1 {PKT}\nexpect 3 {PKT}\n")
    assert r.passed, r.messages


def test_p4c_statement_forms_still_parse():
    text = """
    ADD test2 100 data.f2:0x04040404 c4_6(val4:0x4040, val5:0x5050, val6:0x6060, port:2)
    add tab1 dstAddr:0xa1a2a3a4a5a6 act(port:2) = A
    add test1 0 data.$valid:0b1 data.f1:0x****0101 setb1(val:0x7f, port:2)
    add t hdr.s[1].f:0b1*1/3 a()
    setdefault ethertype_match l2_packet()
    expect 1 *1010101 03030303 0101 0202 0303 0404 0505 0606
    expect 2 0102 $
    packet 0 01010101 03030303 9999 8888 7777 6666 5555 4444
    expect 5
    no_packet
    check_counter cntDum(10) packets == 2
    check_counter cntDum($A)
    wait
    remove all
    mirroring_add 5 3
    mc_node_create 0 1 2 3
    counter_write c 1 10 20
    meter_set_rates m 2 0.0001:1 0.0005:1
    """
    assert [s[1] for s in stf.parse_stf(text)] == [
        "add", "add", "add", "add", "setdefault", "expect", "expect", "packet", "expect",
        "no_packet", "check_counter", "check_counter", "wait", "remove", "mirroring_add",
        "mc_node_create", "counter_write", "meter_set_rates"]


def stf_cli(*args):
    return subprocess.run([sys.executable, "-m", "p4scope.cli", "stf", *map(str, args)],
                          capture_output=True, text=True, timeout=120)


def run_cli(tmp_path, stf_bytes: bytes):
    prog = tmp_path / "prog.json"
    prog.write_text(PROG)
    test = tmp_path / "t.stf"
    test.write_bytes(stf_bytes)
    return stf_cli(prog, test), test


@pytest.mark.parametrize("data, error", [
    (b"# fine\npacket 1 00\xff\n", ":2: error: not UTF-8 text (byte 0xff)"),
    (b"wait\nfoo bar\n", ":2: error: unknown command 'foo'"),
    (b"add by_type type:0x10800 fwd(port:1)\n", ":1: error: key ethernet.type: 0x10800 does not fit in bit<16>"),
])
def test_cli_reports_file_line_error_and_fails(tmp_path, data, error):
    r, test = run_cli(tmp_path, data)
    assert r.returncode == 1
    assert f"{test}{error}" in r.stderr.splitlines()
    assert "Traceback" not in r.stderr


def test_cli_missing_files_are_errors_not_tracebacks(tmp_path):
    (tmp_path / "prog.json").write_text(PROG)
    (tmp_path / "t.stf").write_text("wait\n")
    r = stf_cli(tmp_path / "prog.json", tmp_path / "none.stf")
    assert r.returncode == 1, r.stderr
    assert f"{tmp_path / 'none.stf'}: error: cannot read the file: No such file or directory" in r.stderr
    r = stf_cli(tmp_path / "none.json", tmp_path / "t.stf")
    assert r.returncode == 1 and "none.json: No such file or directory" in r.stderr
    assert "Traceback" not in r.stderr
