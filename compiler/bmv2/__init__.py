"""The BMv2 JSON backend for v1model programs.

`build_bmv2_json(ir, diags)` lowers an elaborated program (frontend.ProgramIR)
to the JSON that simple_switch loads (behavioral-model docs/JSON_format.md,
version 2.23 as p4c emits it).  As in p4c's backend, one converter handles
each concern, all sharing a `ConversionContext`:

    context.py      the shared state, block environments, lists and calculations
    storage.py      header types, headers, stacks, unions, `scalars`
    values.py       what expressions denote (operands, headers, structs)
    env.py          what names denote while bodies are inlined
    names.py        control-plane names (from the P4Info builder), synthesized names
    parsers.py      the parser (states, ops, transitions, sub-parsers, if)
    controls.py     ingress/egress pipelines (tables, conditionals, inlining)
    tables.py       tables, keys, actions, entries, resources
    primitives.py   statements to primitives (action bodies, inlined calls, loops)
    primlist.py     primitive lists with jump labels
    expressions.py  expressions to operands
    externs.py      v1model externs to primitives, calculations, lists
    instances.py    counter/meter/register arrays
    checksums.py    verify/update checksum controls
    deparser.py     the deparser's emit order

`scripts/dev/bmv2_conformance.py` runs p4c's v1model samples through it
(compile, STF tests on the engine, differential test against p4c's JSON).

Constructs that are not supported yet are reported as errors of kind
UNSUPPORTED naming the construct; nothing is silently dropped.
"""

from __future__ import annotations

from typing import Any

from .. import types
from ..diagnostics import Diagnostics, ErrorKind
from ..frontend import ProgramIR
from .checksums import ChecksumLowering
from .context import ConversionContext
from .controls import ControlLowering, Pipeline
from .deparser import DeparserLowering
from .env import PacketBinding
from .parsers import ParserLowering
from .storage import STANDARD_METADATA
from .values import Leaf, StructV

__all__ = ["build_bmv2_json"]

ROLES = ("parser", "verify_checksum", "ingress", "egress", "compute_checksum", "deparser")


def build_bmv2_json(ir: ProgramIR, diags: Diagnostics) -> dict:
    return V1ModelBackend(ir, diags).run()


class V1ModelBackend:
    def __init__(self, ir: ProgramIR, diags: Diagnostics) -> None:
        self.ir = ir
        self.diags = diags
        self.ctx = ConversionContext(ir, diags)

    def run(self) -> dict:
        ir, ctx = self.ir, self.ctx
        if ir.package is None or ir.package.name != "V1Switch" or len(ir.blocks) != 6:
            self.diags.error(ErrorKind.ARCH, ir.main.pos if ir.main else None,
                             "the BMv2 backend needs a V1Switch(parser, verifyChecksum, ingress, "
                             "egress, computeChecksum, deparser) main")
            return {}
        by_param = {b.param_name: b for b in ir.blocks}
        blocks = {role: by_param.get(p.name) for role, p in zip(ROLES, ir.package.params)}
        if any(b is None for b in blocks.values()):
            self.diags.error(ErrorKind.ARCH, ir.main.pos if ir.main else None,
                             "V1Switch needs all six blocks")
            return {}
        roots = self.roots(blocks)
        if roots is None:
            return {}
        hdr, meta, std = roots
        ctx.meta_root = meta

        def bind(blk, values: list[Any]) -> dict[str, Any]:
            return {p.name: v for p, v in zip(blk.decl.params, values)}

        parser = ParserLowering(ctx).lower(
            blocks["parser"], bind(blocks["parser"], [PacketBinding("packet_in"), hdr, meta, std]))
        ChecksumLowering(ctx).lower(blocks["verify_checksum"],
                                    bind(blocks["verify_checksum"], [hdr, meta]), verify_block=True)
        pipelines: list[dict] = []
        first_ids: dict[str, int] = {}
        for role, name in (("ingress", "ingress"), ("egress", "egress")):
            pl = Pipeline(ctx, name)
            cl = ControlLowering(ctx, pl)
            blk = blocks[role]
            items = cl.lower_control(blk, bind(blk, [hdr, meta, std]))
            pl.init_table = cl.link(items, None, None)
            for eb, mj in pl.direct_meters:
                mj["result_target"] = eb.info.get("result_target")
                if mj["result_target"] is None:
                    ctx.unsupported(eb.decl.pos, f"direct meter {eb.name} that is never read")
            pipelines.append(pl.render(len(pipelines), first_ids))
        ChecksumLowering(ctx).lower(blocks["compute_checksum"],
                                    bind(blocks["compute_checksum"], [hdr, meta]), verify_block=False)
        deparser = DeparserLowering(ctx).lower(
            blocks["deparser"], bind(blocks["deparser"], [PacketBinding("packet_out"), hdr]))
        out: dict[str, Any] = {}
        out.update(ctx.storage.render())
        out["field_lists"] = ctx.field_lists
        out["errors"] = [[e, i] for i, e in enumerate(ctx.checker.errors)]
        out["enums"] = self.enums()
        out["parsers"] = [parser]
        out["parse_vsets"] = ctx.parse_vsets
        out["deparsers"] = [deparser]
        out["meter_arrays"] = ctx.meter_arrays
        out["counter_arrays"] = ctx.counter_arrays
        out["register_arrays"] = ctx.register_arrays
        out["calculations"] = ctx.calculations
        out["learn_lists"] = ctx.learn_lists
        out["actions"] = ctx.actions
        out["pipelines"] = pipelines
        out["checksums"] = ctx.checksums
        out["force_arith"] = []
        out["extern_instances"] = ctx.extern_instances
        out["field_aliases"] = self.field_aliases(std, ctx.meta_root)
        import os
        out["program"] = os.path.basename(ir.main.pos.file) if ir.main is not None else ""
        out["__meta__"] = {"version": [2, 23], "compiler": "p4scope"}
        return out

    def roots(self, blocks) -> Any:
        """Storage for the three objects all v1model blocks share: the
        headers struct, the user metadata and standard_metadata."""
        ctx = self.ctx
        pblk = blocks["parser"]
        params = pblk.decl.params
        if len(params) != 4:
            self.diags.error(ErrorKind.ARCH, pblk.decl.pos, "the v1model parser takes 4 parameters")
            return None
        scope = pblk.scope
        ht = ctx.checker.resolve_type(params[1].type, scope)
        mt = ctx.checker.resolve_type(params[2].type, scope)
        st = ctx.checker.resolve_type(params[3].type, scope)
        if not isinstance(st, types.StructLike):
            self.diags.error(ErrorKind.ARCH, params[3].pos, "expected standard_metadata_t")
            return None
        std = ctx.storage.alloc_standard_metadata(st)
        # p4c names the user metadata scalars after the struct type: "metadata_t.f"
        meta_name = mt.name if isinstance(mt, types.StructLike) else params[2].name
        hdr = ctx.storage.alloc_root(params[1].name, ht, params[1].pos)
        meta = ctx.storage.alloc_root(meta_name, mt, params[2].pos)
        return hdr, meta, std

    def enums(self) -> list[dict]:
        from .. import ast
        out = []
        for d in self.ir.program.decls:
            if isinstance(d, ast.EnumDecl) and d.type is None and not _is_bundled(d.pos.file):
                out.append({"name": d.name, "entries": [[m.name, i] for i, m in enumerate(d.members)]})
        return out

    def field_aliases(self, std, meta) -> list:
        """BMv2 field aliases from @alias annotations: standard_metadata's
        (queueing_metadata.*, intrinsic_metadata.*) and, as p4c does, those
        on user-metadata fields (e.g. p4src/include/p4scope_tm.p4's
        "p4scope.enq_qbytes"), nested structs included."""
        from .. import ast

        out = []

        def walk(sv) -> None:
            st = sv.type
            for fname, _ in getattr(st, "fields", ()):
                value = sv.fields.get(fname)
                for a in st.field_annotations.get(fname, ()):
                    if a.name == "alias" and a.body and isinstance(a.body[0], ast.StringLit) \
                            and isinstance(value, Leaf) and value.node.get("type") == "field":
                        out.append([a.body[0].value, list(value.node["value"])])
                if isinstance(value, StructV):
                    walk(value)

        walk(std)
        if isinstance(meta, StructV):
            walk(meta)
        return out


def _is_bundled(path: str) -> bool:
    import os
    return os.path.basename(path) in ("core.p4", "v1model.p4") and "p4include" in path
