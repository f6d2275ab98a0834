"""The STF runner (p4scope.commands.stf) on a small program: parsing, tables,
wildcards and the per-port comparison rules of p4c's bmv2stf.py."""

from tests.dataplane.programs import DROP, FWD, ethernet_program, key, table

from p4scope.commands import stf

PROG = ethernet_program([FWD, DROP], [table("ingress.mac", 0, [key("ethernet", "dst", "ternary")],
                                            [0, 1], ["fwd", "drop"], match_type="ternary",
                                            default=1)], "ingress.mac")
PKT = "0000000000AA 0000000000BB 0800 0102"


def test_pass_with_wildcards_and_priorities():
    text = f"""
    # comment
    add mac 10 ethernet.dst:0x**********A* fwd(port:2)
    add ingress.mac 20 dst:0x0000000000AA fwd(port:3)
    packet 1 {PKT}
    expect 3 0000000000AA **** $
    """
    # the expected packet above is shorter than the output and ends in $: fail
    r = stf.run_stf(PROG, text)
    assert not r.passed and "too long" in r.messages[0]
    r = stf.run_stf(PROG, text.replace("**** $", "****"))
    assert r.passed, r.messages


def test_counts_per_port_and_unmentioned_ports():
    r = stf.run_stf(PROG, f"add mac 1 dst:0x0000000000AA fwd(port:2)\npacket 1 {PKT}\n")
    assert r.passed  # port 2 is not mentioned: not checked
    r = stf.run_stf(PROG, f"add mac 1 dst:0x0000000000AA fwd(port:2)\npacket 2 {PKT}\n")
    assert not r.passed and "expected 0 packets on port 2" in r.messages[0]
    r = stf.run_stf(PROG, f"packet 1 {PKT}\nexpect 1\n")
    assert r.passed  # dropped; an expect without data accepts anything


def test_errors_name_the_line():
    r = stf.run_stf(PROG, "add nosuch 1 dst:1 fwd(port:2)\n")
    assert not r.passed and r.messages[0].startswith("line 1:")
    r = stf.run_stf(PROG, "add mac 1 dst:0xAA fwd(prt:2)\n")
    assert "unexpected action arg" in r.messages[0]


def test_compare_packet_rules():
    assert stf.compare_packet("AB**", bytes.fromhex("ABCDEF")) is None
    assert "too short" in stf.compare_packet("ABCDEF01", bytes.fromhex("ABCDEF"))
    assert "too long" in stf.compare_packet("AB$", bytes.fromhex("ABCD"))
    assert "mismatch" in stf.compare_packet("AC", bytes.fromhex("AB"))


def test_lpm_and_ternary_value_helpers():
    assert stf._ternary("0x**01") == (0x0001, 0x00FF)
    assert stf._lpm("0x0A00/8") == (0x0A00, 8)
    assert stf._lpm("0x0A**") == (0x0A00, 8)
