"""Hostile STF files for `p4scope stf PROG TEST.stf`: bytes that are not
UTF-8, values too wide for their field, malformed and unknown commands,
names the program lacks.  Each stops the test with exit status 1 and
``TEST.stf:LINE: error: ...`` naming the line (as p4c's STF runner fails
such a test), never a traceback."""

from __future__ import annotations

from contextlib import contextmanager

from hostile_core import Area, Expect, Probe, cli_probe
from hostile_programs import probe_program

NAME = "STF"
STF = "t.stf"
GOOD = ("add fwd hdr.ethernet.dst:0x000000000002 forward(port:3)\n"
        "packet 1 000000000002 000000000001 1234 DEADBEEF\n"
        "expect 3 000000000002 000000000001 1234 DEADBEEF\n")


@contextmanager
def environment(ctx):
    shared = ctx.workspace.fresh("program")
    (shared / "probe.json").write_text(probe_program().json_text)
    ctx.extra["program"] = shared / "probe.json"
    yield ctx


def _write(text: str | bytes):
    data = text.encode() if isinstance(text, str) else text
    return lambda cwd: (cwd / STF).write_bytes(data)


def stf_line_error(name: str, text: str | bytes, line: int, says: tuple[str, ...] = (),
                   fast: bool = True) -> Probe:
    """A test whose line `line` is bad: exit 1, `t.stf:LINE: error:`."""
    expect = Expect(codes=(1,), says=(f"{STF}:{line}: error:",) + says)
    return cli_probe(name, our_program(STF), expect, _write(text), fast=fast)


def our_program(test: str):
    """`stf PROBE.JSON TEST`: the area's compiled probe.p4 (read only)."""
    return lambda cwd, env: ["stf", env.extra["program"], test]


def probes(fast: bool) -> list[Probe]:
    hdr = "# a hostile test\n"
    out = [
        stf_line_error("bytes that are not UTF-8",
                       (hdr + "packet 1 00\n").encode() + b"expect 1 \xff\xfe\n", 3, ("UTF-8",)),
        stf_line_error("a key over its 48 bits", hdr + "add fwd hdr.ethernet.dst:0x1000000000000 "
                       "forward(port:3)\n", 2),
        stf_line_error("an action argument over its 9 bits' bytes",
                       hdr + "add fwd hdr.ethernet.dst:2 forward(port:0x10000)\n", 2),
        stf_line_error("a 10,000-digit key", hdr + f"add fwd hdr.ethernet.dst:{'9' * 10_000} "
                       "forward(port:3)\n", 2),
        stf_line_error("a 10,000-digit hex argument",
                       hdr + f"add fwd hdr.ethernet.dst:2 forward(port:0x{'f' * 10_000})\n", 2),
        stf_line_error("a garbage line", hdr + GOOD + "$%^&*\n", 5),
        stf_line_error("an unknown command", hdr + "frobnicate 1 2\n", 2),
        stf_line_error("packet data that is not hex", hdr + "packet 1 zz\n", 2),
        stf_line_error("packet data of an odd number of digits", hdr + "packet 1 0\n", 2),
        stf_line_error("packet without a port", hdr + "packet\n", 2),
        stf_line_error("packet on port 2**70", hdr + f"packet {2 ** 70} 00\n", 2),
        stf_line_error("packet on port -1", hdr + "packet -1 00\n", 2),
        stf_line_error("expect with data that is not hex", hdr + "expect 1 0g\n", 2),
        stf_line_error("expect with two $", hdr + "expect 1 00 $ $\n", 2),
        stf_line_error("add to an unknown table", hdr + "add nosuch hdr.ethernet.dst:1 "
                       "forward(port:3)\n", 2),
        stf_line_error("add an unknown action", hdr + "add fwd hdr.ethernet.dst:1 nosuch(port:3)\n",
                       2),
        stf_line_error("add an unknown key field", hdr + "add fwd hdr.ethernet.nope:1 "
                       "forward(port:3)\n", 2),
        stf_line_error("add an unknown argument", hdr + "add fwd hdr.ethernet.dst:1 "
                       "forward(nope:3)\n", 2),
        stf_line_error("add without the argument", hdr + "add fwd hdr.ethernet.dst:1 forward()\n",
                       2),
        stf_line_error("an unclosed action call", hdr + "add fwd hdr.ethernet.dst:1 "
                       "forward(port:3\n", 2),
        stf_line_error("add alone", hdr + "add\n", 2),
        stf_line_error("setdefault to an unknown action", hdr + "setdefault fwd nosuch()\n", 2),
        stf_line_error("NUL bytes in packet data", hdr + "packet 1 \x00\x00\n", 2),
        stf_line_error("a 1 MB garbage line", hdr + "packet 1 " + "zz" * 500_000 + "\n", 2),
        stf_line_error("mirroring_add with words", hdr + "mirroring_add x y\n", 2),
        stf_line_error("mc_node_associate missing an argument", hdr + "mc_node_associate 1\n", 2),
        stf_line_error("register_write past the register", hdr + "register_write scratch 99 1\n",
                       2),
        stf_line_error("counter_write missing an argument",
                       hdr + "counter_write port_packets 99999 1\n", 2),
        stf_line_error("the bad line after 10,000 good ones",
                       hdr + "packet 1 000000000009 000000000001 1234\n" * 10_000 + "bad line\n",
                       10_002, fast=False),
    ]
    # the files themselves
    out.append(cli_probe("a missing STF file", our_program("nope.stf"),
                         Expect(codes=(1,), says=("nope.stf",)), None))
    out.append(cli_probe("a folder as the STF file", our_program("."),
                         Expect(codes=(1,), says=("Is a directory",)), None))
    out.append(cli_probe("a program that is not JSON",
                         ["stf", "bad.json", STF], Expect(codes=(1,), says=("JSON",)),
                         lambda cwd: (_write(GOOD)(cwd), (cwd / "bad.json").write_text("garbage{"))))
    out.append(cli_probe("a program JSON nested 100,000 deep", ["stf", "deep.json", STF],
                         Expect(codes=(1,)),
                         lambda cwd: (_write(GOOD)(cwd), (cwd / "deep.json").write_text(
                             '{"a":' * 100_000 + "1" + "}" * 100_000))))
    out.append(cli_probe("a P4 program that does not parse", ["stf", "bad.p4", STF],
                         Expect(codes=(1,), says=("bad.p4:1:",)),
                         lambda cwd: (_write(GOOD)(cwd), (cwd / "bad.p4").write_text("control {"))))
    out.append(cli_probe("a program named .txt", ["stf", "prog.txt", STF],
                         Expect(codes=(2,), says=(".p4",)),
                         lambda cwd: (_write(GOOD)(cwd), (cwd / "prog.txt").write_text("x"))))
    out.append(cli_probe("a missing program", ["stf", "nope.json", STF],
                         Expect(codes=(1,), says=("nope.json",)), _write(GOOD)))
    out.append(cli_probe("/dev/null as the program JSON", ["stf", "/dev/null", STF],
                         Expect(codes=(2,)), _write(GOOD)))
    # the control: a good test passes, so the errors above are the lines' doing
    out.append(cli_probe("a good test (control)", our_program(STF),
                         Expect(codes=(0,), says=()), _write(GOOD)))
    return [p for p in out if p.fast or not fast]


AREA = Area(NAME, probes, environment)
