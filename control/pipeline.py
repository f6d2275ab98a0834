"""A forwarding pipeline: the P4Info plus the device config (BMv2 JSON).

    Pipeline.from_files("build/dut.json", "build/dut.p4info.txtpb")
    Pipeline.from_build("dut")                     # build/dut.json + .p4info.txtpb
    Pipeline.from_compiled("dut", result)          # a compiler's output (p4scope's:
                                                   # compiler.compile_file)

The device config is the raw JSON, as p4c's PTF base test sends it; PI on
simple_switch_grpc and p4scope's switch both accept that form.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional, Union

from finsy.proto import p4i

from .schema import Schema, load_p4info

PathLike = Union[str, Path]


@dataclass
class Pipeline:
    name: str
    p4info: p4i.P4Info
    device_config: bytes

    @property
    def schema(self) -> Schema:
        return Schema(self.p4info)

    @classmethod
    def from_files(cls, json_path: PathLike, p4info_path: PathLike,
                   name: Optional[str] = None) -> "Pipeline":
        jp = Path(json_path)
        return cls(name or jp.stem, load_p4info(p4info_path), jp.read_bytes())

    @classmethod
    def from_build(cls, program: str, build_dir: PathLike = "build") -> "Pipeline":
        d = Path(build_dir)
        for ext in ("p4info.txtpb", "p4info.txt", "p4info.json", "p4info.bin", "p4info.pb"):
            p = d / f"{program}.{ext}"
            if p.exists():
                return cls.from_files(d / f"{program}.json", p, program)
        raise FileNotFoundError(f"no P4Info for '{program}' in {d} (compile it first: "
                                f"p4scope compile p4src/{program}.p4 -o {d}/{program}.json "
                                f"--p4info {d}/{program}.p4info.txtpb)")

    @classmethod
    def from_compiled(cls, name: str, compiled: Any) -> "Pipeline":
        """From a compiler's output in memory: its `p4info` (P4Info message)
        and `bmv2_json` (the JSON document). The controller never compiles;
        its caller does (p4scope's compiler: `compiler.compile_file`)."""
        return cls(name, compiled.p4info, json.dumps(compiled.bmv2_json).encode())
