"""BMv2's run-time Thrift API as Python types (thriftpy2, no generated code).

`bm()` loads bmv2_runtime.thrift (next to this file) once and returns the module: its
services (`Standard`, `SimplePreLAG`, `SimplePre`, `SimpleSwitch`), structs,
enums and exceptions. The multiplexed service names are BMv2's, so the real
simple_switch_CLI and p4scope's own `switch-cli` reach the same handlers.
"""

from __future__ import annotations

import os
from functools import lru_cache

IDL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bmv2_runtime.thrift")

# multiplexed service name -> service attribute of the IDL module
SERVICES = {
    "standard": "Standard",
    "simple_pre_lag": "SimplePreLAG",
    "simple_pre": "SimplePre",
    "simple_switch": "SimpleSwitch",
}


@lru_cache(maxsize=None)
def bm():
    """The IDL module (thriftpy2 types are built at run time from the file)."""
    import thriftpy2
    return thriftpy2.load(IDL, module_name="p4scope_bmv2_runtime_thrift")
