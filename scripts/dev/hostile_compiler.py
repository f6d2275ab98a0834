"""Hostile inputs to `p4scope compile`: output paths it must refuse, input
files that are not programs, and sources built to exhaust it (exponential
macros, absurd widths, huge literals, deep nesting, long lines, bytes that
are not UTF-8).  As p4c: output folders must exist (exit 1), a bad option
value is a usage error (exit 2), a bad program a positioned error (exit 1);
never a traceback, an internal error or a hang."""

from __future__ import annotations

import os
import random
import stat
from pathlib import Path

from hostile_core import Area, Expect, Probe, Ran, cli_probe, no_environment
from hostile_programs import EMPTY_V1MODEL

NAME = "compiler CLI"
OK = "ok.p4"
BIG = "1" * 10_000  # over Python's 4300-digit int/str limit


def program(cwd: Path, text: str | bytes = EMPTY_V1MODEL, name: str = OK) -> None:
    data = text.encode() if isinstance(text, str) else text
    (cwd / name).write_bytes(data)


def with_program(text: str | bytes = EMPTY_V1MODEL, name: str = OK):
    return lambda cwd: program(cwd, text, name)


def compile_args(*rest):
    return ["compile", *rest]


def doubling_macros(n: int) -> str:
    """A0..An, each twice the one before: An has 2**n operands."""
    return "#define A0 1\n" + "".join(f"#define A{i} (A{i - 1}+A{i - 1})\n"
                                      for i in range(1, n + 1))


def still_dev_null(ran: Ran, cwd: Path):
    if not stat.S_ISCHR(os.stat("/dev/null").st_mode):
        return "/dev/null is no longer a character device"
    return None


def _paths() -> list[Probe]:
    """Output and input paths."""
    out = []
    missing = Expect(codes=(1,), says=("No such file or directory",), absent=("nodir",))
    for opt, target in [("-o", "nodir/x.json"), ("-o", "nodir/sub/x.json"), ("-o", "nodir/"),
                        ("--p4info", "nodir/x.p4info.txtpb"),
                        ("--p4runtime-files", "nodir/x.txt")]:
        args = [OK, opt, target] + ([] if opt == "-o" else ["-o", "x.json"])
        out.append(cli_probe(f"{opt} {target} (folder missing)", compile_args(*args), missing,
                             with_program()))
    refuse_self = Expect(codes=(2,), says=("input program",), unchanged=(OK,))
    out.append(cli_probe("-o the program itself", compile_args(OK, "-o", OK), refuse_self,
                         with_program()))
    out.append(cli_probe("-o ./the program", compile_args(OK, "-o", f"./{OK}"), refuse_self,
                         with_program()))

    def link_setup(cwd):
        program(cwd)
        (cwd / "link.json").symlink_to(OK)

    out.append(cli_probe("-o a link to the program", compile_args(OK, "-o", "link.json"),
                         refuse_self, link_setup))
    out.append(cli_probe("--p4info the program (text format)",
                         compile_args(OK, "-o", "x.json", "--p4info", OK,
                                      "--p4runtime-format", "text"),
                         refuse_self, with_program()))
    out.append(cli_probe("--p4info source.p4 (unknown kind)",
                         compile_args(OK, "-o", "x.json", "--p4info", "source.p4"),
                         Expect(codes=(2,), says=("--p4info",), absent=("source.p4",)),
                         with_program()))
    out.append(cli_probe("--p4info the program (unknown kind)",
                         compile_args(OK, "-o", "x.json", "--p4info", OK),
                         Expect(codes=(2,), says=("--p4info",), unchanged=(OK,)),
                         with_program()))
    for fmt in ("xml", "", "TEXT; rm -rf /", "../text"):
        out.append(cli_probe(f"--p4runtime-format {fmt!r}",
                             compile_args(OK, "-o", "x.json", "--p4info", "i.txt",
                                          "--p4runtime-format", fmt),
                             Expect(codes=(2,), says=("--p4runtime-format",)), with_program()))
    out.append(cli_probe("--p4info i.xml", compile_args(OK, "-o", "x.json", "--p4info", "i.xml"),
                         Expect(codes=(2,), says=("--p4info",)), with_program()))
    for target in ("/proc/x.json", "/proc/nodir/x.json"):
        out.append(cli_probe(f"-o {target}", compile_args(OK, "-o", target),
                             Expect(codes=(1,), says=(target,), absent=(target,)),
                             with_program()))
    out.append(cli_probe("--p4info /proc/x.txt",
                         compile_args(OK, "-o", "x.json", "--p4info", "/proc/x.txt"),
                         Expect(codes=(1,), absent=("/proc/x.txt",), may_make=("x.json",)),
                         with_program()))
    out.append(cli_probe("/dev/null as the program", compile_args("/dev/null", "-o", "x.json"),
                         Expect(codes=(1,), says=("main",), also=still_dev_null), None))

    def plain_file(cwd):
        program(cwd)
        (cwd / "plain").write_text("")

    out.append(cli_probe("-o inside a plain file", compile_args(OK, "-o", "plain/x.json"),
                         Expect(codes=(1,), says=("Not a directory",), unchanged=("plain",)),
                         plain_file))

    def out_dir(cwd):
        program(cwd)
        (cwd / "out.json").mkdir()

    out.append(cli_probe("-o an existing folder's name without /",
                         compile_args(OK, "-o", "out.json"),
                         Expect(codes=(0,), may_make=("out.json/ok.json",)), out_dir))
    long_name = "x" * 300 + ".json"
    out.append(cli_probe("-o a 300-character name", compile_args(OK, "-o", long_name),
                         Expect(codes=(1,), says=("File name too long",)), with_program()))
    out.append(cli_probe("a folder as the program", compile_args(".", "-o", "x.json"),
                         Expect(codes=(1,), says=("Is a directory",)), None))
    out.append(cli_probe("a missing program", compile_args("nope.p4", "-o", "x.json"),
                         Expect(codes=(1, 2), says=("nope.p4",)), None))

    def loop(cwd):
        (cwd / "a.p4").symlink_to("b.p4")
        (cwd / "b.p4").symlink_to("a.p4")

    out.append(cli_probe("a symlink loop as the program", compile_args("a.p4", "-o", "x.json"),
                         Expect(codes=(1,), says=("a.p4",)), loop))
    out.append(cli_probe("--p4v 14", compile_args(OK, "--p4v", "14", "-o", "x.json"),
                         Expect(codes=(2,), says=("--p4v",)), with_program()))
    out.append(cli_probe("--arch psa", compile_args(OK, "--arch", "psa", "-o", "x.json"),
                         Expect(codes=(2,), says=("--arch",)), with_program()))
    return out


def _source(name: str, text: str | bytes, codes=(1,), says=(), fast=True,
            timeout: float = 30.0, max_seconds=None) -> Probe:
    """Compile a hostile source: exit `codes` (a success may write x.json)."""
    return cli_probe(name, compile_args(OK, "-o", "x.json"),
                     Expect(codes=codes, says=says, may_make=("x.json",),
                            max_seconds=max_seconds),
                     with_program(text), timeout=timeout, fast=fast)


def _sources(fast: bool) -> list[Probe]:
    main = EMPTY_V1MODEL
    out = [
        _source("exponential macro A1..A30", doubling_macros(30) + "const bit<32> x = A30;\n" + main,
                says=("too large",), timeout=30, max_seconds=10),
        _source("exponential macro in #if", doubling_macros(30) + "#if A30 > 0\n#endif\n" + main,
                says=("too large",), timeout=30, max_seconds=10),
        _source("exponential macro through arguments",
                "#define D(x) x x\nconst bit<8> y = 1 + " + "D(" * 24 + "1" + ")" * 24 + ";\n" + main,
                says=("too large",), timeout=30, max_seconds=10),
        _source("mutually recursive macros", "#define A B\n#define B A\nconst bit<8> x = A;\n"
                + main),
        _source("a macro defined as itself 10,000 times over",
                "".join(f"#define M{i} M{i + 1}\n" for i in range(10_000))
                + "const bit<8> x = M0;\n" + main),
        _source("bit<99999999999999999999999>", "const bit<99999999999999999999999> x = 1;\n" + main,
                says=("bitstrings this large",)),
        _source("bit<4096>", "const bit<4096> x = 1;\n" + main, says=("2048",)),
        _source("int<0x7fffffffffffffff>", "const int<0x7fffffffffffffff> x = 1;\n" + main),
        _source("varbit<4294967296>", "header v_t { varbit<4294967296> v; }\n" + main),
        _source("bit<-1>", "const bit<-1> x = 1;\n" + main),
        _source("a 10,000-digit literal", f"const bit<32> x = {BIG};\n" + main, codes=(0,)),
        _source("a 10,000-digit hex literal", f"const bit<32> x = 0x{'f' * 10_000};\n" + main,
                codes=(0,)),
        _source("a 10,000-digit width (Nw1)", f"const bit<32> x = {BIG}w1;\n" + main,
                says=("too large",)),
        _source("a 10,000-digit constant as a width", f"const int W = {BIG};\nconst bit<W> x = 1;\n"
                + main, says=("bitstrings this large",)),
        _source("4096w1", "const bit<32> x = 4096w1;\n" + main, says=("too large",)),
        _source("1 << 10,000,000", "const int x = 1 << 10000000;\nconst bit<8> y = (bit<8>)x;\n"
                + main, codes=(0, 1), timeout=30),
        _source("1 << 2**60", "const int x = 1 << 1152921504606846976;\n"
                "const bit<8> y = (bit<8>)x;\n" + main, codes=(1,), timeout=30),
        _source("10 ** huge via repeated multiply", "const int x = " + "*".join(["99999999"] * 2000)
                + ";\n" + main, codes=(0, 1)),
        _source("non-UTF-8 bytes in a comment", b"// \xff\xfe\xc3\x28 caf\xe9\n" + main.encode(),
                codes=(0,)),
        _source("non-UTF-8 bytes in the code", b"const bit<8> x\xff = 1;\n" + main.encode(),
                says=("error",)),
        _source("non-UTF-8 bytes in an annotation string",
                b'@name("\xff\xfe") const bit<8> x = 1;\n' + main.encode(), codes=(0, 1)),
        _source("NUL bytes in the code", b"const bit<8> \x00x = 1;\n" + main.encode()),
        _source("a UTF-16 file", main.encode("utf-16")),
        _source("a 1 MB comment line", "// " + "x" * 1_000_000 + "\n" + main, codes=(0,)),
        _source("a 1 MB identifier", "const bit<8> " + "x" * 1_000_000 + " = 1;\n" + main,
                codes=(0, 1)),
        _source("a 1 MB string", 'const string s = "' + "x" * 1_000_000 + '";\n' + main,
                codes=(0, 1)),
        _source("a 1 MB annotation", "@foo(" + "x," * 500_000 + "x) const bit<8> y = 1;\n" + main,
                codes=(0, 1), timeout=120, fast=False),
        _source("a 100 kB annotation", "@foo(" + "x," * 50_000 + "x) const bit<8> y = 1;\n" + main,
                codes=(0, 1)),
        _source("10,000 nested parentheses", "const bit<8> x = " + "(" * 10_000 + "1"
                + ")" * 10_000 + ";\n" + main, says=("error",)),
        _source("10,000 nested blocks", main.replace(
            "control I(inout h_t hdr, inout m_t m, inout standard_metadata_t sm) { apply { } }",
            "control I(inout h_t hdr, inout m_t m, inout standard_metadata_t sm) { apply { "
            + "{" * 10_000 + "}" * 10_000 + " } }"), says=("error",)),
        _source("10,000 unary minuses", "const bit<8> x = " + "-" * 10_000 + "1;\n" + main,
                says=("error",)),
        _source("10,000 nested #if", "#if 1\n" * 10_000 + "#endif\n" * 10_000 + main,
                codes=(0, 1)),
        _source("a program that includes itself", '#include "ok.p4"\n' + main, says=("error",)),
        _source("#if without #endif", "#if 1\n" + main, says=("error",)),
        _source("an unterminated comment", main + "/* no end\n", says=("error",)),
        _source("an unterminated string", 'const string s = "no end\n' + main, says=("error",)),
        _source("an empty file", "", says=("main",)),
        _source("#error", "#error stop here\n" + main, says=("stop here",)),
        _source("#include of a missing file", '#include "nope.p4"\n' + main, says=("nope.p4",)),
        _source("#include of a folder", '#include "."\n' + main, says=("error",)),
        _source("#line 99999999999999999999", "#line 99999999999999999999\n" + main,
                codes=(0, 1)),
        _source("a parser state looping forever",
                main.replace("state start { transition accept; }",
                             "state start { transition start; }"), codes=(0, 1)),
        _source("10,000 chained parser states",
                main.replace("state start { transition accept; }",
                             "state start { transition s0; }\n"
                             + "".join(f"state s{i} {{ transition s{i + 1}; }}\n"
                                       for i in range(10_000))
                             + "state s10000 { transition accept; }"),
                codes=(0, 1), timeout=60, fast=False),
        _source("a 1 MB line of 1+1+...", "const bit<32> x = " + "+".join(["1"] * 333_000)
                + ";\n" + main, codes=(0, 1), timeout=120, fast=False),
    ]
    rng = random.Random(10)
    for i in range(3 if fast else 20):
        junk = bytes(rng.randrange(256) for _ in range(rng.choice((16, 4096, 65536))))
        out.append(_source(f"random bytes #{i} ({len(junk)} B)", junk, says=("error",)))
    tokens = ["(", ")", "{", "}", "<", ">", "bit", "header", "control", "apply", ";", "=",
              "1", "x", "@", "#define", "\n", "table", "key", ":", "exact", "0x", "w", "s",
              "..", "&&&", "[", "]", ".", ",", "transition", "select", "state"]
    for i in range(3 if fast else 20):
        soup = " ".join(rng.choice(tokens) for _ in range(rng.choice((50, 2000))))
        out.append(_source(f"token soup #{i}", soup + "\n" + main, codes=(0, 1)))
    return out


def probes(fast: bool) -> list[Probe]:
    return [p for p in _paths() + _sources(fast) if p.fast or not fast]


AREA = Area(NAME, probes, no_environment)
