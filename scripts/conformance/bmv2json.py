"""Conformance against BMv2: would simple_switch load p4scope's JSON?

`p4scope conformance bmv2-json TESTDATA REFERENCE` compiles every v1model
program ``TESTDATA/p4_16_samples/*-bmv2.p4`` for which p4c produced a JSON
``REFERENCE/<name>.json`` (REFERENCE may also be a folder holding
``p4c-bm2-ss/``) and checks the operand forms of p4scope's JSON with
`compiler.bmv2.validate` (what BMv2's P4Objects loader accepts: `runtime_data`
as a primitive's parameter, `local` inside expressions, operator shapes).
p4c's JSON, which BMv2 loads, is the model: it goes through the same check,
and any problem found there is a fault of the check itself.

Programs p4c rejects (no reference JSON) are counted and skipped.  Neither
folder is part of this repository.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from .cli import _Timeout, _deadline, _error_line, find_samples

ACCEPTED, REFUSED, FAILED = "accepted", "refused", "failed"


@dataclass
class JsonResult:
    name: str
    status: str                                        # ACCEPTED, REFUSED or FAILED
    problems: list[str] = field(default_factory=list)  # in p4scope's JSON
    reason: str = ""                                   # why it did not compile
    reference_problems: list[str] = field(default_factory=list)  # in p4c's JSON


def reference_folder(reference: Path) -> Path:
    """The folder of p4c's `<name>.json` files."""
    sub = reference / "p4c-bm2-ss"
    return sub if sub.is_dir() else reference


def check_program(program: Path, reference_json: Path, timeout: float = 120.0,
                  limit: int = 50) -> JsonResult:
    """Compile one program and check both JSONs.  Never raises."""
    from p4scope.compiler import compile_file
    from p4scope.compiler.bmv2.validate import bmv2_json_problems

    name = program.name[:-len(".p4")]
    result = JsonResult(name, FAILED)
    try:
        result.reference_problems = bmv2_json_problems(
            json.loads(reference_json.read_text(encoding="utf-8")), limit)
    except (OSError, ValueError) as e:
        result.reference_problems = [f"cannot read {reference_json.name}: {e}"]
    try:
        with _deadline(timeout):
            ours = compile_file(program, backends=("bmv2",)).bmv2_json
    except _Timeout:
        result.reason = f"timeout: no result after {timeout:.0f} s"
        return result
    except Exception as e:  # noqa: BLE001 - any failure is a reportable result
        result.reason = _error_line(e)
        return result
    result.problems = bmv2_json_problems(ours or {}, limit)
    result.status = REFUSED if result.problems else ACCEPTED
    return result


def run_bmv2_json_conformance(testdata: Path, reference: Path, pattern: Optional[str] = None,
                              timeout: float = 120.0) -> tuple[list[JsonResult], list[str]]:
    """Results for the programs with a reference JSON, and the names of
    those without one (p4c rejected them)."""
    folder = reference_folder(reference)
    results: list[JsonResult] = []
    no_reference: list[str] = []
    for program in find_samples(testdata, pattern):
        ref = folder / (program.name[:-len(".p4")] + ".json")
        if not ref.is_file():
            no_reference.append(program.name)
            continue
        results.append(check_program(program, ref, timeout))
    return results, no_reference


def summarize(results: list[JsonResult], no_reference: list[str], testdata: Path,
              reference: Path, out=None) -> None:
    out = out or sys.stdout
    n = {s: sum(r.status == s for r in results) for s in (ACCEPTED, REFUSED, FAILED)}
    model_bad = [r for r in results if r.reference_problems]
    print(f"BMv2 JSON conformance: {len(results) + len(no_reference)} v1model programs in "
          f"{testdata / 'p4_16_samples'}, p4c's JSON in {reference_folder(reference)}", file=out)
    print(f"  p4c's JSON            {len(results):4d}   (passes the check: "
          f"{len(results) - len(model_bad)})", file=out)
    print(f"  p4scope compiled      {n[ACCEPTED] + n[REFUSED]:4d}", file=out)
    print(f"  BMv2 would load       {n[ACCEPTED]:4d}", file=out)
    print(f"  BMv2 would refuse     {n[REFUSED]:4d}", file=out)
    print(f"  failed to compile     {n[FAILED]:4d}", file=out)
    print(f"  p4c rejects (skipped) {len(no_reference):4d}", file=out)
    refused = [r for r in results if r.status == REFUSED]
    if refused:
        print("\nOperands BMv2 would refuse in p4scope's JSON, first of each program:", file=out)
        for r in refused:
            more = f"  (+{len(r.problems) - 1} more)" if len(r.problems) > 1 else ""
            print(f"  {r.name}: {r.problems[0]}{more}", file=out)
    if model_bad:
        print("\nThe check flags p4c's own JSON (a fault of the check):", file=out)
        for r in model_bad:
            print(f"  {r.name}: {r.reference_problems[0]}", file=out)
    failed = [r for r in results if r.status == FAILED]
    if failed:
        print("\nFailed to compile:", file=out)
        for r in failed:
            print(f"  {r.name}: {r.reason}", file=out)


def exit_code(results: list[JsonResult]) -> int:
    """1 when p4scope's JSON would be refused, a program p4c compiles fails
    to compile, or the check flags p4c's JSON; else 0."""
    bad = any(r.status != ACCEPTED or r.reference_problems for r in results)
    return 1 if bad else 0
