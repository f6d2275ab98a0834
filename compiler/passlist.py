"""The compiler's passes, in the order they run (`p4scope compile
--list-passes` prints this list).

Each stage's function is looked up in its module when the pass runs, not
when this module is imported, so a tool that wraps one (the compile
benchmark times `preprocess`, `parse`, `run_frontend`, `build_p4info` and
`build_bmv2_json`) sees every call.
"""

from __future__ import annotations

import json

from .irdump import dump_blocks, dump_scope, dump_tree
from .passes import Compilation, Pass, PassManager

# ------------------------------------------------------------------ front end


def _v1model_version(c: Compilation) -> None:
    from .programchecks import v1model_version

    v1model_version(c.program, c.diags)


def _declare(c: Compilation) -> None:
    from .checker import Checker

    c.checker = Checker(c.program, c.diags)


def _check(c: Compilation) -> None:
    from .frontend import BodyChecker

    c.body = BodyChecker(c.checker)
    for d in c.program.decls:
        c.body.check_toplevel(d)


def _elaborate(c: Compilation) -> None:
    from .frontend import Elaborator, ProgramIR

    c.ir = ProgramIR(c.program, c.checker)
    Elaborator(c.ir, c.body, c.diags).run()


def _parsers_terminate(c: Compilation) -> None:
    from .programchecks import parsers_terminate

    parsers_terminate(c.ir, c.diags)


def _unique_action_names(c: Compilation) -> None:
    from .programchecks import action_control_plane_names

    action_control_plane_names(c.ir, c.diags)


def _tree(c: Compilation) -> str:
    return dump_tree(c.program)


def _typed_tree(c: Compilation) -> str:
    return dump_tree(c.program, c.checker.expr_types)


def _blocks(c: Compilation) -> str:
    return dump_blocks(c.ir)


FRONTEND = PassManager([
    # p4c checks the version while it prints the program back, before any
    # other pass, and goes on to report the errors of the next one too.
    Pass("v1model-version", "the program's V1MODEL_VERSION is one p4c knows",
         _v1model_version, _tree, stops_on_error=False),
    Pass("declare", "enter the top-level declarations into the global scope",
         _declare, lambda c: dump_scope(c.checker), stops_on_error=False),
    Pass("check", "resolve names, type every expression, fold constants, "
         "check each declaration and body", _check, _typed_tree),
    Pass("elaborate", "instantiate the blocks from `main`: the block tree and "
         "control-plane names", _elaborate, _blocks),
    Pass("parsers-terminate", "every parser can reach accept or reject (p4c's SimplifyParsers)",
         _parsers_terminate, _blocks, stops_on_error=False),
    Pass("unique-action-names", "no two actions share a control-plane name "
         "(p4c's DuplicateActionControlPlaneNameCheck)", _unique_action_names, _blocks),
])

# ------------------------------------------------------------------- compiler


def _preprocess(c: Compilation) -> None:
    from .preprocess import preprocess

    c.source = preprocess(c.text, c.filename, list(c.include_dirs), c.defines, c.diags)


def _parse(c: Compilation) -> None:
    from .parser import parse

    c.program = parse(c.source, c.diags, c.filename)


def _frontend(c: Compilation) -> None:
    from .frontend import run_frontend

    c.ir = run_frontend(c.program, c.diags, observer=c.observer)
    c.checker = c.ir.checker


def _p4info(c: Compilation) -> None:
    from .p4info import build_p4info

    c.p4info = build_p4info(c.ir, c.diags)


def _bmv2(c: Compilation) -> None:
    from .bmv2 import build_bmv2_json

    c.bmv2_json = build_bmv2_json(c.ir, c.diags)


def _p4info_text(c: Compilation) -> str:
    from .p4info_io import to_text

    return to_text(c.p4info)


PASSES = PassManager([
    Pass("preprocess", "expand #include, #define and #if into one source text",
         _preprocess, lambda c: c.source),
    Pass("parse", "build the syntax tree", _parse, _tree),
    Pass("frontend", "check the program and elaborate it from `main`", _frontend, _blocks,
         passes=FRONTEND.passes),
    Pass("p4info", "build the P4Runtime P4Info", _p4info, _p4info_text,
         enabled=lambda c: "p4info" in c.backends),
    Pass("bmv2", "build the BMv2 JSON", _bmv2,
         lambda c: json.dumps(c.bmv2_json, indent=2) + "\n",
         enabled=lambda c: "bmv2" in c.backends),
])
