"""STF packet tests (p4c's tools/stf format) on p4scope's engine.

An STF file is a list of commands, one per line (`#` starts a comment):

    add <table> [<prio>] <key>:<value> ... <action>(<arg>:<value>, ...)
    setdefault <table> <action>(<arg>:<value>, ...)
    packet <port> <hex bytes>
    expect <port> [<hex bytes, * for any nibble> [$]]
    wait | remove all | check_counter ...      (accepted, no effect, as in p4c)
    no_packet                                  (likewise)
    mirroring_add <session> <port>, mirroring_add_mc <session> <mgid>,
    mc_mgrp_create <mgid>, mc_node_create <rid> <port>..., mc_node_associate
    <mgid> <node>, counter_write, register_write, register_reset,
    meter_set_rates, meter_array_set_rates (as simple_switch_CLI takes them)

The runner follows p4c's backends/bmv2/bmv2stf.py: table and action names
match exactly or by suffix; ternary values like `0x**01` become
value&&&mask; lpm values without `/len` get a length from their digits; STF
priorities p become BMv2 priority 10000 - p (lower wins); outputs are
compared per port in order, only on ports the test mentions; an `expect`
without data accepts anything on that port; `$` asks for an exact length,
otherwise the expected bytes are a prefix.  Key and argument values must
fit their field's bytes, as simple_switch_CLI requires ("Parameter is too
large"); BMv2 drops the bits above the width within the last byte.

A malformed line (see stf_syntax) or a command the program cannot satisfy
stops the test with an error naming its line: ``FILE:LINE: error: ...``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Tuple

from .stf_syntax import StfError, parse_stf, read_stf
from .stf_syntax import number as _num

__all__ = ["StfError", "StfRunner", "Result", "parse_stf", "run_stf", "run_program",
           "compare_packet", "conformance", "compiled_conformance"]


@dataclass
class Result:
    passed: bool
    messages: List[str] = field(default_factory=list)
    unsupported: bool = False
    error: Optional[StfError] = None   # the test could not run: bad file or command


# ---------------------------------------------------------------- values


def _ternary(value: str) -> Tuple[int, int]:
    """`0x**01` -> (0x0001, 0x00ff): value and mask from wildcard digits."""
    v = value.replace("_", "")
    for prefix, bits, full in (("0x", 4, "f"), ("0b", 1, "1"), ("0o", 3, "7")):
        if v.lower().startswith(prefix):
            digits = v[2:]
            val = int(digits.replace("*", "0"), {4: 16, 1: 2, 3: 8}[bits])
            mask = int("".join("0" if c == "*" else full for c in digits), {4: 16, 1: 2, 3: 8}[bits])
            return val, mask
    raise StfError(f"decimal value {value} not supported for a ternary key")


def _lpm(value: str) -> Tuple[int, int]:
    if "/" in value:
        v, _, n = value.partition("/")
        return _num(v), _num(n)
    v = value.replace("_", "")
    for prefix, bits in (("0x", 4), ("0b", 1), ("0o", 3)):
        if v.lower().startswith(prefix):
            digits = v[2:]
            return int(digits.replace("*", "0"), {4: 16, 1: 2, 3: 8}[bits]), (len(digits) - digits.count("*")) * bits
    h = hex(int(v))[2:]
    return int(v), len(h) * 4


def _fitting(value: int, width: int, what: str, text: str) -> int:
    """`value` for a field of `width` bits, checked as simple_switch_CLI
    checks it: it must fit the field's whole bytes ("Parameter is too
    large"); bits above the width within them are dropped, as BMv2 does."""
    if value >> (8 * ((width + 7) // 8)):
        raise StfError(f"{what}: {text} does not fit in bit<{width}>")
    return value & ((1 << width) - 1)


# ---------------------------------------------------------------- running


class StfRunner:
    """Runs STF statements on a p4scope_dataplane.Engine."""

    def __init__(self, engine) -> None:
        self.engine = engine
        self.tables = {t[0]: t for t in engine.table_info()}
        self.actions = {a[0]: a for a in engine.action_info()}
        self.expected: Dict[int, Dict[str, object]] = {}
        self.ports: set = set()
        self.outputs: Dict[int, List[bytes]] = {}
        self.time_ns = 0
        self.adds = 0

    def _table(self, name: str):
        if name in self.tables:
            return self.tables[name]
        cands = [t for n, t in self.tables.items() if n.endswith(name)]
        if len(cands) > 1:
            raise StfError(f"table name {name} is ambiguous")
        if not cands:
            raise StfError(f"could not find table {name}")
        return cands[0]

    def _action(self, table, name: str) -> str:
        acts = table[3]
        if name in acts:
            return name
        cands = [a for a in acts if a.endswith(name)]
        if len(cands) > 1:
            raise StfError(f"ambiguous action name {name} in {table[0]}")
        if not cands:
            raise StfError(f"no action {name} in table {table[0]}")
        return cands[0]

    def _args(self, action: str, args: List[Tuple[str, str]]) -> List[int]:
        params = self.actions[action][1]
        given = {k: v for k, v in args}
        for k in given:
            if k not in [p[0] for p in params]:
                raise StfError(f"unexpected action arg {k}")
        missing = [p[0] for p in params if p[0] not in given]
        if missing:
            raise StfError(f"action {action}: missing argument(s) {', '.join(missing)}")
        return [_fitting(_num(given[name]), width, f"action argument {name}", given[name])
                for name, width in params]

    @staticmethod
    def _key_name(fields: List[str], key: str) -> str:
        m = re.match(r"(.*)\$([0-9]+)(.*)", key)
        if m:
            key = f"{m.group(1)}[{m.group(2)}]{m.group(3)}"
        if key in fields:
            return key
        for alt in (key + "$", key + ".$valid$"):
            if alt in fields:
                return alt
        if key.endswith(".valid") and key[:-5] + "$valid$" in fields:
            return key[:-5] + "$valid$"
        for f in fields:
            if f.endswith("." + key) or f.endswith("." + key + "$"):
                return f
            if key == "valid" and f.endswith(".$valid$"):
                return f
        if key == "valid" and "$valid$" in fields:
            return "$valid$"
        raise StfError(f"unexpected key field {key}")

    def add(self, table_name, prio, keys, action_name, args) -> None:
        table = self._table(table_name)
        fields = [k[0] for k in table[2]]
        kinds = {k[0]: k[1] for k in table[2]}
        widths = {k[0]: k[2] for k in table[2]}
        values: Dict[str, tuple] = {}
        for k, v in keys:
            name = self._key_name(fields, k)
            values[name] = self._key_value(name, kinds[name], widths[name], v)
        key = []
        for name, kind, width in table[2]:
            if name in values:
                val = values[name]
                key.append(val)
            elif kind in ("ternary", "optional"):
                key.append(("ternary", 0, 0))
            elif kind == "lpm":
                key.append(("lpm", 0, 0))
            elif kind == "range":
                key.append(("range", 0, (1 << width) - 1))
            else:
                key.append(("exact", 0))
        action = self._action(table, action_name)
        priority = 0
        if table[1] in ("ternary", "range"):
            priority = 10000 - prio if prio is not None else 10000 + self.adds
        self.adds += 1
        self.engine.table_add(table[0], action, key, self._args(action, args), priority)

    @staticmethod
    def _key_value(name: str, kind: str, width: int, text: str) -> tuple:
        """The engine's form of one key value, checked against its width."""
        what = f"key {name}"
        if kind in ("ternary", "optional"):
            if re.fullmatch(r"\d+", text):  # decimal: every bit counts
                return ("ternary", _fitting(_num(text), width, what, text), (1 << width) - 1)
            val, mask = _ternary(text)
            return ("ternary", _fitting(val, width, what, text), _fitting(mask, width, what, text))
        if kind == "lpm":
            val, plen = _lpm(text)
            if plen > width:
                raise StfError(f"{what}: prefix length {plen} of {text} is longer than bit<{width}>")
            return ("lpm", _fitting(val, width, what, text), plen)
        if kind == "range":
            lo, _, hi = text.partition("..")
            return ("range", _fitting(_num(lo), width, what, text), _fitting(_num(hi or lo), width, what, text))
        return ("exact", _fitting(_num(text), width, what, text))

    def setdefault(self, table_name, action_name, args) -> None:
        table = self._table(table_name)
        action = self._action(table, action_name)
        self.engine.table_set_default(table[0], action, self._args(action, args))

    def packet(self, port: int, data: str) -> None:
        self.ports.add(port)
        try:
            raw = bytes.fromhex(data)
        except ValueError as e:
            raise StfError(f"invalid packet data {data}") from e
        self.time_ns += 1000
        for p, out, _t in self.engine.process([(port, raw, self.time_ns)]):
            self.outputs.setdefault(p, []).append(bytes(out))

    def expect(self, port: int, data: str) -> None:
        self.ports.add(port)
        exp = self.expected.setdefault(port, {"any": False, "pkts": []})
        if data:
            exp["pkts"].append(data)  # type: ignore[union-attr]
        else:
            exp["any"] = True

    def direct(self, cmd: str, a: List[str]) -> None:
        e = self.engine
        if cmd == "mirroring_add":
            e.mirroring_add(_num(a[0]), port=_num(a[1]))
        elif cmd == "mirroring_add_mc":
            e.mirroring_add(_num(a[0]), mgid=_num(a[1]))
        elif cmd == "mirroring_delete":
            e.mirroring_delete(_num(a[0]))
        elif cmd == "mc_mgrp_create":
            e.mc_group_create(_num(a[0]))
        elif cmd == "mc_node_create":
            e.mc_node_create(_num(a[0]), [_num(x) for x in a[1:]])
        elif cmd == "mc_node_update":
            e.mc_node_update(_num(a[0]), [_num(x) for x in a[1:]])
        elif cmd == "mc_node_associate":
            e.mc_node_associate(_num(a[0]), _num(a[1]))
        elif cmd == "counter_write":
            e.counter_write(a[0], _num(a[1]), _num(a[3]), _num(a[2]))
        elif cmd == "register_write":
            e.register_write(a[0], _num(a[1]), _num(a[2]))
        elif cmd == "register_reset":
            e.register_reset(a[0])
        elif cmd in ("meter_set_rates", "meter_array_set_rates"):
            idx = _num(a[1]) if cmd == "meter_set_rates" else None
            rates = [(float(r.split(":")[0]), int(r.split(":")[1])) for r in a[2 if idx is not None else 1:]]
            e.meter_set_rates(a[0], idx, rates)
        # counter_read, register_read, mirroring_get, meter_get_rates: no effect

    def run(self, statements) -> None:
        for no, cmd, a in statements:
            try:
                if cmd == "add":
                    self.add(*a)
                elif cmd == "setdefault":
                    self.setdefault(a[0], a[3], a[4])
                elif cmd == "packet":
                    self.packet(int(a[0]), a[1])
                elif cmd == "expect":
                    self.expect(int(a[0]), a[1])
                elif cmd in ("wait", "remove", "check_counter", "no_packet", ""):
                    pass
                else:
                    self.direct(cmd, a)
            except StfError as e:
                raise e.at(no) from None
            except Exception as e:  # engine errors: name the line
                raise StfError(f"{type(e).__name__}: {e}", no) from None

    def check(self) -> List[str]:
        """Compares outputs with expectations; returns the failures."""
        errors = []
        for port in sorted(self.ports):
            got = self.outputs.get(port, [])
            exp = self.expected.get(port)
            if exp is None:
                expected: List[str] = []
            elif exp["any"]:
                continue
            else:
                expected = exp["pkts"]  # type: ignore[assignment]
            if len(expected) != len(got):
                errors.append(f"expected {len(expected)} packets on port {port}, got {len(got)}")
                continue
            for i, (e, g) in enumerate(zip(expected, got)):
                err = compare_packet(e, g)
                if err:
                    errors.append(f"port {port} packet {i}: {err}")
                    break
        return errors


def compare_packet(expected: str, received: bytes) -> Optional[str]:
    """p4c's rule: hex nibbles with * wildcards; a trailing $ means exact length."""
    got = received.hex().upper()
    exp = "".join(expected.split()).upper()
    strict = exp.endswith("$")
    if strict:
        exp = exp[:-1]
    if len(got) < len(exp):
        return f"received packet too short: expected {exp}, got {got}"
    for i, c in enumerate(exp):
        if c != "*" and c != got[i]:
            return f"mismatch at nibble {i}: expected {exp}, got {got}"
    if strict and len(got) > len(exp):
        return f"received packet too long: expected {exp}$, got {got}"
    return None


def run_stf(json_text: str, stf_text: str) -> Result:
    """Loads the program, runs the test, checks the outputs."""
    import p4scope_dataplane as dp

    try:
        statements = parse_stf(stf_text)
    except StfError as e:
        return Result(False, [str(e)], error=e)
    try:
        engine = dp.Engine(json_text)
    except dp.LoadError as e:
        return Result(False, [f"unsupported: {e}"], unsupported=True)
    runner = StfRunner(engine)
    try:
        runner.run(statements)
    except StfError as e:
        return Result(False, [str(e)], error=e)
    errors = runner.check()
    return Result(not errors, errors)


def run_files(json_path: Path, stf_path: Path) -> Result:
    try:
        stf_text = read_stf(stf_path)
    except StfError as e:
        return Result(False, [str(e)], error=e)
    return run_stf(json_path.read_text(errors="replace"), stf_text)


def compile_program(p4_path: Path) -> Tuple[Optional[str], Optional[Result]]:
    """Compile a P4 program with p4scope's compiler for an STF run: the BMv2
    JSON text, or the Result that says why there is none (a construct the
    compiler does not support yet counts as unsupported, any other error as
    a failure)."""
    import json

    from p4scope.compiler import CompileError, compile_file
    from p4scope.compiler.diagnostics import ErrorKind

    try:
        compiled = compile_file(p4_path, backends=("bmv2",))
    except CompileError as e:
        first = e.diagnostics[0]
        return None, Result(False, [f"compile: {first.pos}: {first.message}"],
                            unsupported=first.kind == ErrorKind.UNSUPPORTED)
    except Exception as e:  # a compiler bug: a failure, never a crash of the run
        return None, Result(False, [f"compiler error: {type(e).__name__}: {e}"])
    return json.dumps(compiled.bmv2_json), None


def run_program(program: Path, stf_path: Path) -> Result:
    """Run an STF test against a program given as BMv2 JSON or as P4 source."""
    try:
        stf_text = read_stf(stf_path)
        parse_stf(stf_text)   # a malformed test fails before any compiling
    except StfError as e:
        return Result(False, [str(e)], error=e)
    if program.suffix == ".json":
        return run_stf(program.read_text(errors="replace"), stf_text)
    json_text, failure = compile_program(program)
    if failure is not None:
        return failure
    return run_stf(json_text, stf_text)


def compiled_conformance(samples: Path, pattern: str = "*-bmv2") -> Dict[str, Result]:
    """Compile every v1model `<name>.p4` of samples that has `<name>.stf` with
    p4scope's compiler and run the test on the engine."""
    results: Dict[str, Result] = {}
    for stf in sorted(samples.glob(pattern + ".stf")):
        prog = stf.with_suffix(".p4")
        if not prog.exists() or "v1model.p4" not in prog.read_text(errors="replace"):
            continue
        try:
            results[stf.stem] = run_program(prog, stf)
        except Exception as e:  # never let one test stop the run
            results[stf.stem] = Result(False, [f"runner error: {type(e).__name__}: {e}"])
    return results


def conformance(json_dir: Path, stf_dir: Path, pattern: str = "*-bmv2") -> Dict[str, Result]:
    """Runs every `<name>.stf` in stf_dir that has `<name>.json` in json_dir."""
    results: Dict[str, Result] = {}
    for stf in sorted(stf_dir.glob(pattern + ".stf")):
        js = json_dir / (stf.stem + ".json")
        if not js.exists():
            continue
        try:
            results[stf.stem] = run_files(js, stf)
        except Exception as e:  # never let one test stop the run
            results[stf.stem] = Result(False, [f"runner error: {type(e).__name__}: {e}"])
    return results


# ---------------------------------------------------------------- commands


def _summary(results: Dict[str, Result]) -> Tuple[int, int, int]:
    passed = sum(1 for r in results.values() if r.passed)
    unsupported = sum(1 for r in results.values() if r.unsupported)
    return passed, len(results) - passed - unsupported, unsupported


def cli_stf(program: Path, test: Path) -> None:
    """Run one STF packet test against a P4 program (compiled by p4scope)
    or a program given as BMv2 JSON."""
    import typer

    if program.suffix not in (".json", ".p4"):
        typer.echo("p4scope stf: give the program as P4 source (.p4) or BMv2 JSON (.json)", err=True)
        raise typer.Exit(2)
    try:
        with open(program, "rb"):
            pass
    except OSError as e:
        typer.echo(f"p4scope stf: error: {program}: {e.strerror}", err=True)
        raise typer.Exit(1)
    r = run_program(program, test)
    if r.error is not None:   # FILE:LINE: error: ..., as compile errors read
        where = f"{test}:{r.error.line}" if r.error.line is not None else str(test)
        typer.echo(f"{where}: error: {r.error.message}", err=True)
    else:
        for m in r.messages:
            typer.echo(f"{test}: {m}", err=True)
    typer.echo(f"{test}: {'PASS' if r.passed else 'UNSUPPORTED' if r.unsupported else 'FAIL'}")
    raise typer.Exit(0 if r.passed else 1)


def cli_stf_dir(json_dir: Path, stf_dir: Path, pattern: str = "*-bmv2") -> None:
    """Run every STF test of STF_DIR whose program JSON is in JSON_DIR
    (e.g. p4c's testdata/p4_16_samples with p4c-bm2-ss's JSON)."""
    import typer

    results = conformance(json_dir, stf_dir, pattern)
    report_results(results)


def report_results(results: Dict[str, Result]) -> None:
    """Print one line per test that did not pass, then the counts; exit 1
    unless everything passed."""
    import typer

    for name, r in results.items():
        if not r.passed:
            kind = "UNSUPPORTED" if r.unsupported else "FAIL"
            typer.echo(f"{kind} {name}: {r.messages[0] if r.messages else ''}")
    p, f, u = _summary(results)
    typer.echo(f"stf: {len(results)} tests: {p} passed, {f} failed, {u} unsupported")
    raise typer.Exit(0 if f == 0 and u == 0 else 1)
