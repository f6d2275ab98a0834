"""Conformance against p4c: P4Info of p4c's own test programs.

`p4scope conformance p4info DIR` compiles every v1model program
``DIR/p4_16_samples/*-bmv2.p4`` with p4scope's compiler and compares its
P4Info with p4c's golden ``DIR/p4_16_samples_outputs/<file>.p4info.txtpb``.
DIR is a local copy of p4c's ``testdata`` folder (never part of this
repository).

The comparison (`compare_p4info`) works field by field and ignores order
where P4Info order carries no meaning: top-level objects are matched by name,
match fields, action references, parameters and metadata by id, annotations
as a multiset.  Each difference is one line such as

    tables[ingress.t].match_fields[2].bitwidth: 16 != 32

with p4scope's value first and p4c's second.  A program that fails to compile
(for any reason, including parts of the compiler not being there yet) is
counted with the first line of its error; the run itself never crashes.
"""

from __future__ import annotations

import fnmatch
import math
import os
import re
import signal
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Optional

import typer

app = typer.Typer(help="Compare p4scope's output with p4c's on p4c's test programs.",
                  no_args_is_help=True)

# ---------------------------------------------------------------------------
# Field-by-field comparison of two P4Info messages

_PKG = "p4.config.v1."

# (message type, repeated field) -> key of each element; these lists are
# compared as unordered collections matched on that key.
_KEYED: dict[tuple[str, str], Callable[[Any], Any]] = {}
for _entity in ("tables", "actions", "action_profiles", "counters", "direct_counters",
                "meters", "direct_meters", "controller_packet_metadata", "value_sets",
                "registers", "digests"):
    _KEYED[(_PKG + "P4Info", _entity)] = lambda m: m.preamble.name or m.preamble.id
_KEYED[(_PKG + "P4Info", "externs")] = lambda m: m.extern_type_name or m.extern_type_id
_KEYED[(_PKG + "Extern", "instances")] = lambda m: m.preamble.name or m.preamble.id
_KEYED[(_PKG + "Table", "match_fields")] = lambda m: m.id
_KEYED[(_PKG + "Table", "action_refs")] = lambda m: m.id
_KEYED[(_PKG + "Action", "params")] = lambda m: m.id
_KEYED[(_PKG + "ControllerPacketMetadata", "metadata")] = lambda m: m.id
_KEYED[(_PKG + "ValueSet", "match")] = lambda m: m.id

# Repeated scalar fields whose order means nothing.
_UNORDERED_SCALARS = {"annotations", "direct_resource_ids"}


def compare_p4info(ours, theirs, limit: Optional[int] = None) -> list[str]:
    """Differences between two P4Info messages, one line each, `ours` value
    first.  An empty list means the two are equal up to meaningless order."""
    diffs: list[str] = []
    action_names = {a.preamble.id: a.preamble.name for a in list(theirs.actions) + list(ours.actions)}
    cmp = _Comparer(diffs, limit, action_names)
    try:
        cmp.message("", ours, theirs)
    except _Enough:
        pass
    return diffs


class _Enough(Exception):
    """Raised to stop once `limit` differences were found."""


class _Comparer:
    def __init__(self, diffs: list[str], limit: Optional[int], action_names: dict[int, str]):
        self.diffs = diffs
        self.limit = limit
        self.action_names = action_names

    def report(self, path: str, text: str) -> None:
        self.diffs.append(f"{path}: {text}")
        if self.limit is not None and len(self.diffs) >= self.limit:
            raise _Enough

    def message(self, path: str, ours, theirs) -> None:
        desc = theirs.DESCRIPTOR
        for fd in desc.fields:
            sub = f"{path}.{fd.name}" if path else fd.name
            a, b = getattr(ours, fd.name), getattr(theirs, fd.name)
            if _is_map(fd):
                self.mapping(sub, fd, a, b)
            elif _is_repeated(fd):
                self.repeated(sub, desc.full_name, fd, a, b)
            elif fd.message_type is not None:
                has_a, has_b = ours.HasField(fd.name), theirs.HasField(fd.name)
                if has_a and has_b:
                    self.message(sub, a, b)
                elif has_a != has_b:
                    self.report(sub, "present != absent" if has_a else "absent != present")
            elif a != b:
                self.report(sub, f"{_show(fd, a)} != {_show(fd, b)}")

    def repeated(self, path: str, owner: str, fd, a, b) -> None:
        key = _KEYED.get((owner, fd.name))
        if key is not None:
            self.keyed(path, fd, key, a, b)
        elif fd.message_type is None and fd.name in _UNORDERED_SCALARS:
            missing = Counter(b) - Counter(a)
            extra = Counter(a) - Counter(b)
            for v in sorted(extra.elements(), key=str):
                self.report(path, f"unexpected {_show(fd, v)}")
            for v in sorted(missing.elements(), key=str):
                self.report(path, f"missing {_show(fd, v)}")
        else:
            for i, (x, y) in enumerate(zip(a, b)):
                if fd.message_type is not None:
                    self.message(f"{path}[{i}]", x, y)
                elif x != y:
                    self.report(f"{path}[{i}]", f"{_show(fd, x)} != {_show(fd, y)}")
            if len(a) != len(b):
                self.report(path, f"{len(a)} elements != {len(b)}")

    def keyed(self, path: str, fd, key, a, b) -> None:
        ours = _index(a, key)
        theirs = _index(b, key)
        for k in _sorted_keys(set(ours) | set(theirs)):
            label = f"{path}[{self.label(fd, k)}]"
            if k not in ours:
                self.report(label, "missing")
            elif k not in theirs:
                self.report(label, "unexpected")
            else:
                self.message(label, ours[k], theirs[k])

    def label(self, fd, k) -> str:
        if fd.name == "action_refs" and k in self.action_names:
            return self.action_names[k]
        return str(k)

    def mapping(self, path: str, fd, a, b) -> None:
        value_fd = fd.message_type.fields_by_name["value"]
        for k in _sorted_keys(set(a) | set(b)):
            label = f"{path}[{k}]"
            if k not in a:
                self.report(label, "missing")
            elif k not in b:
                self.report(label, "unexpected")
            elif value_fd.message_type is not None:
                self.message(label, a[k], b[k])
            elif a[k] != b[k]:
                self.report(label, f"{_show(value_fd, a[k])} != {_show(value_fd, b[k])}")


def _is_repeated(fd) -> bool:
    # protobuf >= 5.29 has is_repeated and deprecates label.
    flag = getattr(fd, "is_repeated", None)
    return flag if isinstance(flag, bool) else fd.label == fd.LABEL_REPEATED


def _is_map(fd) -> bool:
    return (_is_repeated(fd) and fd.message_type is not None
            and fd.message_type.GetOptions().map_entry)


def _index(items, key) -> dict:
    out: dict = {}
    for i, item in enumerate(items):
        k = key(item)
        if k in out:   # a duplicate key is itself a difference; keep both
            k = f"{k}#{i}"
        out[k] = item
    return out


def _sorted_keys(keys: Iterable) -> list:
    return sorted(keys, key=lambda k: (not isinstance(k, int), k if isinstance(k, int) else str(k)))


def _show(fd, value) -> str:
    if fd.enum_type is not None:
        v = fd.enum_type.values_by_number.get(value)
        return v.name if v is not None else str(value)
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, bytes):
        return "0x" + value.hex() if value else '""'
    return str(value)


# ---------------------------------------------------------------------------
# Running p4c's samples

_INCLUDES_V1MODEL = re.compile(r'^\s*#\s*include\s*[<"]v1model\.p4[>"]', re.MULTILINE)

EQUAL, DIFFERENT, FAILED, NO_GOLDEN = "equal", "different", "failed", "no-golden"


@dataclass
class SampleResult:
    name: str
    status: str                     # EQUAL, DIFFERENT, FAILED or NO_GOLDEN
    reason: str = ""                # first difference or first error line
    differences: list[str] = field(default_factory=list)
    byte_identical: bool = False    # our text P4Info == p4c's file, byte for byte
    seconds: float = 0.0


def find_samples(testdata: Path, pattern: Optional[str] = None) -> list[Path]:
    """The v1model BMv2 programs of p4c's test suite, sorted by name."""
    programs = []
    for path in sorted((testdata / "p4_16_samples").glob("*-bmv2.p4")):
        if pattern and not fnmatch.fnmatch(path.name, pattern):
            continue
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        if _INCLUDES_V1MODEL.search(text):
            programs.append(path)
    return programs


def golden_for(testdata: Path, program: Path) -> Path:
    return testdata / "p4_16_samples_outputs" / f"{program.name}.p4info.txtpb"


class _Timeout(BaseException):
    """Not an Exception, so that no `except Exception` in the compiler eats it."""


def check_sample(program: Path, golden: Path, timeout: float = 120.0,
                 max_differences: int = 200) -> SampleResult:
    """Compile one program and compare its P4Info with the golden file.
    Never raises: every problem becomes the result's reason."""
    start = time.perf_counter()
    result = SampleResult(program.name, FAILED)
    try:
        with _deadline(timeout):
            ours = _compile_p4info(program)
    except _Timeout:
        result.reason = f"timeout: no result after {timeout:.0f} s"
    except Exception as e:  # noqa: BLE001 - any failure is a reportable result
        result.reason = _error_line(e)
    else:
        result.seconds = time.perf_counter() - start
        _compare_with_golden(result, ours, golden, max_differences)
    result.seconds = time.perf_counter() - start
    return result


def _compile_p4info(program: Path):
    from p4scope.compiler import compile_file

    compiled = compile_file(program, backends=("p4info",))
    if compiled.p4info is None:
        raise RuntimeError("compiler returned no P4Info")
    return compiled.p4info


def _compare_with_golden(result: SampleResult, ours, golden: Path, limit: int) -> None:
    from p4scope.compiler.p4info_io import read_p4info, to_text

    if not golden.is_file():
        result.status = NO_GOLDEN
        result.reason = f"compiled; p4c has no {golden.name}"
        return
    try:
        theirs = read_p4info(golden)
    except Exception as e:  # noqa: BLE001
        result.status = FAILED
        result.reason = f"cannot read golden file: {_error_line(e)}"
        return
    result.differences = compare_p4info(ours, theirs, limit)
    result.status = DIFFERENT if result.differences else EQUAL
    result.reason = result.differences[0] if result.differences else ""
    try:
        result.byte_identical = to_text(ours) == golden.read_text(encoding="utf-8")
    except Exception:  # noqa: BLE001
        result.byte_identical = False


def _error_line(e: BaseException) -> str:
    """First line of a compile error; the exception type for anything else."""
    from p4scope.compiler import CompileError

    if isinstance(e, CompileError):
        first = e.diagnostics[0] if e.diagnostics else None
        return f"{first.pos}: {first.message}" if first else "compile error"
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0]}" if text else type(e).__name__


class _deadline:
    """Raise _Timeout in the main thread after `seconds` (Unix only; a no-op
    elsewhere or off the main thread)."""

    def __init__(self, seconds: float):
        self.seconds = seconds
        self.armed = False

    def __enter__(self):
        import threading

        if (self.seconds and hasattr(signal, "SIGALRM")
                and threading.current_thread() is threading.main_thread()):
            self.previous = signal.signal(signal.SIGALRM, self._fire)
            signal.setitimer(signal.ITIMER_REAL, self.seconds)
            self.armed = True
        return self

    def _fire(self, signum, frame):
        raise _Timeout()

    def __exit__(self, *exc):
        if self.armed:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, self.previous)
        return False


def _check_task(args: tuple[str, str, float]) -> SampleResult:
    program, golden, timeout = args
    return check_sample(Path(program), Path(golden), timeout)


def run_p4info_conformance(testdata: Path, jobs: int = 1, pattern: Optional[str] = None,
                           timeout: float = 120.0,
                           progress: Optional[Callable[[SampleResult], None]] = None
                           ) -> list[SampleResult]:
    """Check every selected sample; results in program order."""
    programs = find_samples(testdata, pattern)
    tasks = [(str(p), str(golden_for(testdata, p)), timeout) for p in programs]
    results: list[SampleResult] = []
    if jobs <= 1 or len(tasks) <= 1:
        for t in tasks:
            r = _check_task(t)
            results.append(r)
            if progress:
                progress(r)
        return results
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(max_workers=jobs) as pool:
        for r in pool.map(_check_task, tasks, chunksize=1):
            results.append(r)
            if progress:
                progress(r)
    return results


def summarize(results: list[SampleResult], testdata: Path, out=None) -> None:
    """Counts, then one line per difference and per failure."""
    out = out or sys.stdout
    count = Counter(r.status for r in results)
    compiled = count[EQUAL] + count[DIFFERENT] + count[NO_GOLDEN]
    identical = sum(r.byte_identical for r in results)
    print(f"P4Info conformance: {len(results)} v1model programs in "
          f"{testdata / 'p4_16_samples'}", file=out)
    print(f"  compiled            {compiled:4d}", file=out)
    print(f"  P4Info equal        {count[EQUAL]:4d}   (byte-identical text: {identical})", file=out)
    print(f"  P4Info differing    {count[DIFFERENT]:4d}", file=out)
    print(f"  failed to compile   {count[FAILED]:4d}", file=out)
    if count[NO_GOLDEN]:
        print(f"  no golden P4Info    {count[NO_GOLDEN]:4d}", file=out)
    differing = [r for r in results if r.status == DIFFERENT]
    if differing:
        print("\nDifferences (p4scope != p4c), first of each program:", file=out)
        for r in differing:
            more = f"  (+{len(r.differences) - 1} more)" if len(r.differences) > 1 else ""
            print(f"  {r.name}: {r.reason}{more}", file=out)
    failed = [r for r in results if r.status == FAILED]
    if failed:
        print("\nFailed to compile:", file=out)
        for r in failed:
            print(f"  {r.name}: {r.reason}", file=out)
        common = Counter(_reason_class(r.reason) for r in failed).most_common(5)
        print("\nMost common failure reasons:", file=out)
        for reason, n in common:
            print(f"  {n:4d}  {reason}", file=out)


def _reason_class(reason: str) -> str:
    """A failure reason without the file position, to group similar ones."""
    return re.sub(r"^\S+:\d+:\d+: ", "", reason)


def write_report(results: list[SampleResult], path: Path) -> None:
    """Everything: every program, its status, time and all differences."""
    lines = []
    for r in results:
        flag = "\tbyte-identical" if r.byte_identical else ""
        lines.append(f"{r.name}\t{r.status}\t{r.seconds * 1000:.0f} ms{flag}")
        if r.status == FAILED or r.status == NO_GOLDEN:
            lines.append(f"    {r.reason}")
        for d in r.differences:
            lines.append(f"    {d}")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


@app.command("p4info")
def p4info_cmd(
    testdata: Path = typer.Argument(..., help="p4c's testdata folder (with p4_16_samples/ "
                                              "and p4_16_samples_outputs/)."),
    jobs: int = typer.Option(os.cpu_count() or 1, "--jobs", "-j",
                             help="Programs compiled in parallel."),
    filter_glob: Optional[str] = typer.Option(None, "--filter",
                                              help="Only programs whose file name matches this glob."),
    report: Optional[Path] = typer.Option(None, "--report",
                                          help="Also write every result and difference to this file."),
    timeout: float = typer.Option(120.0, "--timeout", help="Seconds allowed per program."),
) -> None:
    """Compile p4c's v1model samples and compare P4Info with p4c's golden files."""
    if not (testdata / "p4_16_samples").is_dir():
        typer.echo(f"p4scope conformance: error: {testdata}/p4_16_samples: no such folder "
                   "(give p4c's testdata folder)", err=True)
        raise typer.Exit(2)
    results = run_p4info_conformance(testdata, max(jobs, 1), filter_glob, timeout)
    if not results:
        typer.echo("p4scope conformance: no v1model *-bmv2.p4 programs matched", err=True)
        raise typer.Exit(2)
    summarize(results, testdata)
    if report is not None:
        write_report(results, report)
        typer.echo(f"\nReport: {report}")
    bad = any(r.status in (DIFFERENT, FAILED) for r in results)
    raise typer.Exit(1 if bad else 0)


@app.command("stf")
def stf_cmd(
    testdata: Path = typer.Argument(..., help="p4c's testdata folder (with p4_16_samples/)."),
    pattern: str = typer.Option("*-bmv2", "--pattern", help="Test names to run (glob)."),
) -> None:
    """Compile p4c's v1model samples with p4scope and run their STF packet
    tests on p4scope's engine: pass / fail / unsupported counts and a reason
    for each test that did not pass."""
    from ..commands.stf import compiled_conformance, report_results

    samples = testdata / "p4_16_samples"
    if not samples.is_dir():
        typer.echo(f"p4scope conformance: error: {samples}: no such folder "
                   "(give p4c's testdata folder)", err=True)
        raise typer.Exit(2)
    report_results(compiled_conformance(samples, pattern))


@app.command("errors")
def errors_cmd(
    testdata: Path = typer.Argument(..., help="p4c's testdata folder (with p4_16_errors/ "
                                              "and p4_16_errors_outputs/)."),
    filter_glob: Optional[str] = typer.Option(None, "--filter",
                                              help="Only programs whose file name matches this glob."),
    timeout: float = typer.Option(60.0, "--timeout", help="Seconds allowed per program."),
) -> None:
    """Compile p4c's negative tests: each must be rejected, and its first
    error is compared with the position p4c reports.  Exits 1 if any
    program is accepted or crashes the compiler."""
    from .errors import ACCEPTED, CRASHED, run_errors_conformance, summarize

    if not (timeout > 0 and math.isfinite(timeout)):
        typer.echo("p4scope conformance: error: --timeout must be a positive number of seconds",
                   err=True)
        raise typer.Exit(2)
    if not (testdata / "p4_16_errors").is_dir():
        typer.echo(f"p4scope conformance: error: {testdata}/p4_16_errors: no such folder "
                   "(give p4c's testdata folder)", err=True)
        raise typer.Exit(2)
    results = run_errors_conformance(testdata, filter_glob, timeout)
    if not results:
        typer.echo("p4scope conformance: no p4_16_errors programs matched", err=True)
        raise typer.Exit(2)
    summarize(results, testdata)
    raise typer.Exit(1 if any(r.status in (ACCEPTED, CRASHED) for r in results) else 0)


@app.command("bmv2-json")
def bmv2_json_cmd(
    testdata: Path = typer.Argument(..., help="p4c's testdata folder (with p4_16_samples/)."),
    reference: Path = typer.Argument(..., help="p4c's BMv2 JSON of those programs: a folder of "
                                               "<name>.json, or one holding p4c-bm2-ss/."),
    filter_glob: Optional[str] = typer.Option(None, "--filter",
                                              help="Only programs whose file name matches this glob."),
    timeout: float = typer.Option(120.0, "--timeout", help="Seconds allowed per program."),
) -> None:
    """Compile p4c's v1model samples and check that BMv2's loader would accept
    p4scope's JSON (operand forms, with p4c's JSON as the model).  Exits 1 if
    any JSON would be refused or a program p4c compiles does not compile."""
    from .bmv2json import exit_code, run_bmv2_json_conformance, summarize

    if not (timeout > 0 and math.isfinite(timeout)):
        typer.echo("p4scope conformance: error: --timeout must be a positive number of seconds",
                   err=True)
        raise typer.Exit(2)
    if not (testdata / "p4_16_samples").is_dir():
        typer.echo(f"p4scope conformance: error: {testdata}/p4_16_samples: no such folder "
                   "(give p4c's testdata folder)", err=True)
        raise typer.Exit(2)
    if not reference.is_dir():
        typer.echo(f"p4scope conformance: error: REFERENCE {reference}: no such folder "
                   "(give the folder of p4c's BMv2 JSON files)", err=True)
        raise typer.Exit(2)
    results, no_reference = run_bmv2_json_conformance(testdata, reference, filter_glob, timeout)
    if not results:
        typer.echo("p4scope conformance: no v1model *-bmv2.p4 program with a reference JSON "
                   "matched", err=True)
        raise typer.Exit(2)
    summarize(results, no_reference, testdata, reference)
    raise typer.Exit(exit_code(results))
