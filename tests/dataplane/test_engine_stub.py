"""The engine's type stub (dataplane/p4scope_dataplane.pyi, shipped in the
wheel) says exactly what the built module offers: every public class,
method and function, with the same parameter names and defaults. A method
added in Rust without its stub line, or a stub line for a method that is
gone, fails here rather than in a type checker's blind spot. Rewrite the
stub with `python -m p4scope.dev.engine_stub > dataplane/p4scope_dataplane.pyi`."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import p4scope_dataplane

STUB = Path(__file__).resolve().parents[2] / "dataplane" / "p4scope_dataplane.pyi"


def stub_tree() -> ast.Module:
    return ast.parse(STUB.read_text(encoding="utf-8"))


def stub_params(fn: ast.FunctionDef) -> list[tuple[str, object]]:
    a = fn.args
    pos = a.posonlyargs + a.args
    defaults = [None] * (len(pos) - len(a.defaults)) + [ast.literal_eval(d) for d in a.defaults]
    out = [(p.arg, d) for p, d in zip(pos, defaults) if p.arg != "self"]
    if a.kwarg is not None:
        out.append(("**" + a.kwarg.arg, None))
    return out


def runtime_params(obj) -> list[tuple[str, object]]:
    out = []
    for p in inspect.signature(obj).parameters.values():
        if p.name == "self":
            continue
        if p.kind is inspect.Parameter.VAR_KEYWORD:
            out.append(("**" + p.name, None))
        else:
            out.append((p.name, None if p.default is inspect.Parameter.empty else p.default))
    return out


def public(names) -> set[str]:
    return {n for n in names if not n.startswith("_")}


def test_the_stub_lists_every_class_function_and_constant_of_the_module():
    tree = stub_tree()
    stubbed = {n.name for n in tree.body if isinstance(n, (ast.ClassDef, ast.FunctionDef))}
    stubbed |= public(n.target.id for n in tree.body if isinstance(n, ast.AnnAssign)
                      and isinstance(n.target, ast.Name))
    offered = {n for n in public(dir(p4scope_dataplane))
               if not inspect.ismodule(getattr(p4scope_dataplane, n))}
    assert stubbed == offered


def test_every_method_has_the_runtime_signature():
    for cls in (n for n in stub_tree().body if isinstance(n, ast.ClassDef)):
        runtime = getattr(p4scope_dataplane, cls.name)
        if issubclass(runtime, Exception):
            continue
        methods = {f.name: f for f in cls.body if isinstance(f, ast.FunctionDef)}
        assert public(methods) == public(dir(runtime)), cls.name
        for name, fn in methods.items():
            if any(isinstance(d, ast.Name) and d.id == "property" for d in fn.decorator_list):
                continue
            target = runtime if name == "__init__" else getattr(runtime, name)
            assert stub_params(fn) == runtime_params(target), f"{cls.name}.{name}"


def test_module_functions_have_the_runtime_signature():
    for fn in (n for n in stub_tree().body if isinstance(n, ast.FunctionDef)):
        assert stub_params(fn) == runtime_params(getattr(p4scope_dataplane, fn.name)), fn.name


def test_the_wheel_ships_the_stub_for_type_checkers():
    installed = Path(p4scope_dataplane.__file__).parent
    assert (installed / "__init__.pyi").read_text(encoding="utf-8") == \
        STUB.read_text(encoding="utf-8")
    assert (installed / "py.typed").exists()
