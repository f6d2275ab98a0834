"""The state shared by the BMv2 converters (p4c's ConversionContext).

Holds the program, the checker, the diagnostics, the storage allocator, the
control-plane names, the namers for synthesized objects, and the top-level
JSON lists the converters append to (actions, counter/meter/register arrays,
calculations, learn and field lists, checksums, value sets).
"""

from __future__ import annotations

from typing import Any, Optional

from .. import ast
from .. import types
from ..diagnostics import Diagnostics, ErrorKind, Pos
from ..frontend import BlockInstance, ProgramIR
from ..scope import Scope
from .env import ActionBinding, BlockBinding, ConstBinding, Env, FunctionBinding, TableBinding, ValueSetB
from .names import ControlPlaneNames, Namer
from .storage import Storage
from .values import Leaf, StructV, Value


class ConversionContext:
    def __init__(self, ir: ProgramIR, diags: Diagnostics) -> None:
        self.ir = ir
        self.checker = ir.checker
        self.diags = diags
        self.storage = Storage(self)
        self.names = ControlPlaneNames(ir)
        self.root_env = Env()
        self.inline_depth = 0
        # synthesized names
        self.action_namer = Namer()
        self.table_namer = Namer()
        self.node_counter = 0
        self.calc_namer = Namer()
        self.checksum_namer = Namer()
        # top-level JSON lists
        self.actions: list[dict] = []
        self.counter_arrays: list[dict] = []
        self.meter_arrays: list[dict] = []
        self.register_arrays: list[dict] = []
        self.calculations: list[dict] = []
        self.learn_lists: list[dict] = []
        self.field_lists: list[dict] = []
        self.checksums: list[dict] = []
        self.parse_vsets: list[dict] = []
        self.extern_instances: list[dict] = []
        self.meta_root: Optional[Value] = None
        self._instances: dict[tuple[str, int], Any] = {}
        self._action_cache: dict[Any, int] = {}
        # values standing for `t.apply().hit` once the table was applied
        self.apply_overrides: dict[int, Value] = {}

    # ----------------------------------------------------------- reporting

    def unsupported(self, pos: Optional[Pos], what: str) -> None:
        self.diags.error(ErrorKind.UNSUPPORTED, pos, f"{what} not supported yet")

    def source_info(self, pos: Optional[Pos], fragment: Optional[str] = None) -> Optional[dict]:
        """p4c's `source_info` (BMv2 prints it in its logs): file, line,
        column and the source text (the line from the column on when no
        fragment is given)."""
        if pos is None or pos.line <= 0:
            return None
        if fragment is None:
            text = self.diags.sources.line(pos.file, pos.line) or ""
            fragment = text[max(pos.col, 1) - 1:].strip()
        import os
        return {"filename": os.path.basename(pos.file), "line": pos.line, "column": pos.col,
                "source_fragment": fragment}

    def type_scope(self, env: Optional[Env]) -> Scope:
        blk = env.blk if env is not None else None
        return blk.scope if blk is not None else self.checker.glob

    # ------------------------------------------------------------- actions

    def add_action(self, name: str, runtime_data: list[dict], primitives: list[dict],
                   key: Any = None) -> int:
        """Append an action; `key` lets identical lowerings share one."""
        if key is not None and key in self._action_cache:
            return self._action_cache[key]
        aid = len(self.actions)
        self.actions.append({"name": name, "id": aid, "runtime_data": runtime_data,
                             "primitives": primitives})
        if key is not None:
            self._action_cache[key] = aid
        return aid

    def tuple_name(self) -> str:
        """The name of a digest of a plain list (not a struct): `digest_N`,
        numbered in program order, as the P4Info builder names it."""
        self._tuples = getattr(self, "_tuples", -1) + 1
        return f"digest_{self._tuples}"

    def fresh_node_name(self) -> str:
        name = f"node_{self.node_counter}"
        self.node_counter += 1
        return name

    # ---------------------------------------------------- block environments

    def block_env(self, blk: BlockInstance, params: dict[str, Any], parent: Optional[Env] = None) -> tuple[Env, list]:
        """An environment for the body of `blk`: parameters bound as given,
        constructor parameters as constants, locals declared.  Returns it
        and the local variable declarations with initializers (which run
        when the block starts)."""
        env = Env(parent or self.root_env, blk)
        decl = blk.decl
        for name, b in params.items():
            env.declare(name, b)
        for p in getattr(decl, "ctor_params", ()):
            if p.name in blk.args:
                v = blk.args[p.name]
                if isinstance(v, ast.Expr):
                    # an instance passed as a constructor argument
                    env.declare(p.name, self._ctor_instance(v, blk, parent))
                else:
                    t = self.checker.resolve_type(p.type, blk.scope)
                    env.declare(p.name, ConstBinding(v, t))
        inits: list = []
        for loc in getattr(decl, "locals", ()):
            self.declare_local(blk, loc, env, inits)
        return env, inits

    def _ctor_instance(self, e: ast.Expr, blk: BlockInstance, parent: Optional[Env]) -> Any:
        if isinstance(e, ast.Name) and parent is not None:
            b = parent.lookup(e.name)
            if b is not None:
                return b
        if isinstance(e, ast.Name):
            sym = self.checker.glob.lookup(e.name)
            if sym is not None and sym.kind == "instance":
                return self.global_instance(sym.decl)  # type: ignore[arg-type]
        self.unsupported(e.pos, "this constructor argument")
        return None

    def declare_local(self, blk: BlockInstance, loc: ast.Decl, env: Env, inits: list) -> None:
        if isinstance(loc, ast.VarDecl):
            t = self.checker.resolve_type(loc.type, blk.scope)
            env.declare(loc.name, self.storage.alloc(loc.name, t, loc.pos))
            if loc.init is not None:
                inits.append(loc)
        elif isinstance(loc, ast.ConstDecl):
            sym = blk.scope.lookup(loc.name)
            t = self.checker.resolve_type(loc.type, blk.scope)
            try:
                v = self.checker.const_of_sym(sym) if sym is not None and sym.kind == "const" else None
            except Exception:
                v = None
            if v is None:
                self.unsupported(loc.pos, f"constant {loc.name} that is not known at compile time")
            env.declare(loc.name, ConstBinding(v, t))
        elif isinstance(loc, ast.ActionDecl):
            env.declare(loc.name, ActionBinding(loc, blk, env))
        elif isinstance(loc, ast.TableDecl):
            env.declare(loc.name, TableBinding(loc, blk, env, self.names.local(blk, loc)))
        elif isinstance(loc, ast.Instantiation):
            env.declare(loc.name, self.instance_binding(blk, loc, env))
        elif isinstance(loc, ast.ValueSetDecl):
            env.declare(loc.name, self.value_set(blk, loc))
        elif isinstance(loc, ast.FunctionDecl):
            env.declare(loc.name, FunctionBinding(loc, env))
        else:
            self.unsupported(loc.pos, f"local declaration {type(loc).__name__}")

    # ------------------------------------------------------------ instances

    def instance_binding(self, blk: Optional[BlockInstance], d: ast.Instantiation, env: Optional[Env]) -> Any:
        """What an instantiation denotes: a sub-block (`BlockBinding`) or an extern
        (`ExternBinding`, whose JSON object is created here)."""
        key = (blk.path if blk is not None else "", id(d))
        if key in self._instances:
            return self._instances[key]
        scope = blk.scope if blk is not None else self.checker.glob
        t = self.checker.resolve_type(d.type, scope)
        if isinstance(t, types.Block):
            child = blk.children.get(d.name) if blk is not None else None
            if child is None:
                self.unsupported(d.pos, f"instance {d.name} of {t.name} here")
                return None
            b: Any = BlockBinding(child)
        elif isinstance(t, types.Extern):
            from .instances import make_extern
            b = make_extern(self, blk, d, t, env)
        else:
            self.unsupported(d.pos, f"instantiation of {t}")
            b = None
        self._instances[key] = b
        return b

    def global_instance(self, d: ast.Instantiation) -> Any:
        return self.instance_binding(None, d, self.root_env)

    def value_set(self, blk: BlockInstance, d: ast.ValueSetDecl) -> ValueSetB:
        key = (blk.path, id(d))
        if key in self._instances:
            return self._instances[key]
        name = self.names.local(blk, d)
        t = self.checker.resolve_type(d.type, blk.scope)
        width = types.width_of(t) or 0
        try:
            size = int(self.checker.const_value(d.size, blk.scope))
        except Exception:
            size = 0
        self.parse_vsets.append({"name": name, "id": len(self.parse_vsets),
                                 "compressed_bitwidth": width, "max_size": size})
        vb = ValueSetB(name, t, width)
        self._instances[key] = vb
        return vb

    # ---------------------------------------------------- lists and calcs

    def calculation(self, algo: str, inputs: list[dict], pos: Optional[Pos]) -> str:
        for c in self.calculations:
            if c["algo"] == algo and c["input"] == inputs:
                return c["name"]
        name = self.calc_namer.fresh("calc")
        self.calculations.append({"name": name, "id": len(self.calculations), "algo": algo, "input": inputs})
        return name

    def learn_list(self, name: str, elems: list[dict], pos: Optional[Pos]) -> int:
        for ll in self.learn_lists:
            if ll["name"] == name and ll["elements"] == elems:
                return ll["id"]
        if any(ll["name"] == name for ll in self.learn_lists):
            self.unsupported(pos, f"digest {name} sent with different fields in two places")
        lid = len(self.learn_lists) + 1
        self.learn_lists.append({"id": lid, "name": name, "elements": elems})
        return lid

    def field_list(self, elems: list[dict], pos: Optional[Pos]) -> int:
        for fl in self.field_lists:
            if fl["elements"] == elems:
                return fl["id"]
        fid = len(self.field_lists) + 1
        self.field_lists.append({"id": fid, "name": f"field_list{fid}", "elements": elems})
        return fid

    def annotated_field_list(self, index: int) -> list[dict]:
        """The fields of the user metadata annotated ``@field_list(index)``."""
        out: list[dict] = []

        def walk(v: Value) -> None:
            if not isinstance(v, StructV) or not isinstance(v.type, types.StructLike):
                return
            for fname, fv in v.fields.items():
                anns = v.type.field_annotations.get(fname, ())
                listed = False
                for a in anns:
                    if a.name == "field_list":
                        for x in a.body:
                            try:
                                if self.checker.const_value(x, self.checker.glob) == index:
                                    listed = True
                            except Exception:
                                pass
                if listed:
                    out.extend(x.node for x in _leaves(fv))
                else:
                    walk(fv)

        if self.meta_root is not None:
            walk(self.meta_root)
        return out


def _leaves(v: Value) -> list[Leaf]:
    if isinstance(v, Leaf):
        return [v]
    if isinstance(v, StructV):
        return [x for f in v.fields.values() for x in _leaves(f)]
    from .values import HeaderV
    if isinstance(v, HeaderV):
        return v.leaves()
    return []
