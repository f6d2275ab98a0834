"""p4scope's P4-16 compiler: preprocess, parse, resolve and type-check, then
lower to BMv2 JSON and P4Info exactly as p4c's BMv2 backend does.  The
passes and their order are listed in passlist.py (`p4scope compile
--list-passes`); passes.py runs them.

    from p4scope.compiler import compile_file
    result = compile_file("p4src/dut.p4", include_dirs=["p4src/include"])
    result.bmv2_json   # dict, the BMv2 JSON document
    result.p4info      # p4.config.v1.P4Info message
"""

from .diagnostics import CompileError, Pos
from .driver import CompileResult, compile_file, compile_text

__all__ = ["CompileError", "CompileResult", "Pos", "compile_file", "compile_text"]
