"""Writes the engine's type stub, dataplane/p4scope_dataplane.pyi, from the
built module and the Rust sources of its Python face.

    .venv/bin/python -m p4scope.dev.engine_stub > dataplane/p4scope_dataplane.pyi

Names, parameters and defaults come from the built module (PyO3's text
signatures); types and docstrings from the `#[pymethods]` and `#[pyfunction]`
items in dataplane/src/py/. What the Rust types do not say (a `PyObject`
return) is `Any`. tests/dataplane/test_engine_stub.py holds the stub to the
module, so run this after adding an engine method and review the diff.
"""

from __future__ import annotations

import inspect
import re
import sys
from pathlib import Path
from typing import Any, Iterator, NamedTuple, Optional

import p4scope_dataplane as dp

PY_FACE = Path(__file__).resolve().parents[2] / "dataplane" / "src" / "py"

FN = re.compile(r"((?:[ \t]*///[^\n]*\n|[ \t]*#\[[^\n]*\]\n)*)[ \t]*(?:pub )?fn (\w+)(?:<[^>]*>)?"
                r"\(([^)]*(?:\([^)]*\)[^)]*)*)\)\s*(?:->\s*([^{]+?))?\s*\{")
INTS = {"u8", "u16", "u32", "u64", "u128", "usize", "i32", "i64", "isize"}


class RustFn(NamedTuple):
    params: dict[str, str]
    ret: Optional[str]
    doc: str
    getter: bool


def split_top(s: str) -> list[str]:
    """Splits at the commas not inside <>, () or []."""
    out, depth, cur = [], 0, ""
    for ch in s:
        depth += ch in "<([" and 1 or 0
        depth -= ch in ">)]" and 1 or 0
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    return [x.strip() for x in out + [cur] if x.strip()]


def py_type(t: str) -> str:
    """The Python type of a Rust parameter or return type."""
    t = re.sub(r"'\w+\s*,?\s*", "", t).replace("&mut ", "").replace("&", "").strip()
    for wrapper, fmt in (("PyResult", "{}"), ("Option", "{} | None"), ("Vec", "list[{}]")):
        m = re.fullmatch(wrapper + r"<(.*)>", t)
        if m and not (wrapper == "Vec" and m.group(1) == "u8"):
            return fmt.format(py_type(m.group(1)))
    m = re.fullmatch(r"\((.*)\)", t)
    if m:
        parts = split_top(m.group(1))
        return "tuple[" + ", ".join(py_type(x) for x in parts) + "]" if parts else "None"
    m = re.fullmatch(r"(?:std::collections::)?BTreeMap<(.*)>", t)
    if m:
        k, v = split_top(m.group(1))
        return f"dict[{py_type(k)}, {py_type(v)}]"
    simple = {"str": "str", "String": "str", "f64": "float", "f32": "float", "bool": "bool",
              "[u8]": "bytes", "Vec<u8>": "bytes"}
    if t in simple:
        return simple[t]
    if t in INTS:
        return "int"
    for marker, name in (("PyDict", "dict[str, Any]"), ("PyList", "list[Any]"),
                         ("PyBytes", "bytes")):
        if marker in t:
            return name
    last = t.split("::")[-1]
    return last if hasattr(dp, last) else "Any"


def block_end(text: str, start: int) -> int:
    depth = 0
    for j in range(start, len(text)):
        depth += {"{": 1, "}": -1}.get(text[j], 0)
        if depth == 0:
            return j
    return len(text)


def rust_items() -> dict[tuple[Optional[str], str], RustFn]:
    """(class or None for module functions, name) -> its Rust signature."""
    out: dict[tuple[Optional[str], str], RustFn] = {}

    def item(m: re.Match) -> RustFn:
        pre, _, params, ret = m.groups()
        doc = " ".join(ln.strip()[3:].strip() for ln in pre.splitlines()
                       if ln.strip().startswith("///"))
        types = {p.split(":", 1)[0].strip(): p.split(":", 1)[1] for p in split_top(params)
                 if ":" in p}
        return RustFn(types, ret, doc, "#[getter]" in pre)

    for f in sorted(PY_FACE.glob("*.rs")):
        text = f.read_text(encoding="utf-8")
        for b in re.finditer(r"#\[pymethods\]\s*impl (\w+) \{", text):
            body = text[b.end():block_end(text, b.end() - 1)]
            for m in FN.finditer(body):
                out.setdefault((b.group(1), m.group(2)), item(m))
        for m in FN.finditer(text):
            if "#[pyfunction]" in m.group(1):
                out[(None, m.group(2))] = item(m)
    return out


def params(obj: Any, rust: RustFn) -> list[str]:
    out = []
    for p in inspect.signature(obj).parameters.values():
        if p.name == "self":
            continue
        if p.kind is inspect.Parameter.VAR_KEYWORD:
            out.append(f"**{p.name}: Any")
            continue
        default = "" if p.default is inspect.Parameter.empty else f" = {p.default!r}"
        out.append(f"{p.name}: {py_type(rust.params.get(p.name, 'Any'))}{default}")
    return out


def function(name: str, args: list[str], ret: str, doc: str, indent: str) -> Iterator[str]:
    head = f"{indent}def {name}({', '.join(args)}) -> {ret}:"
    if doc:
        yield head
        yield f'{indent}    """{doc}"""'
        yield f"{indent}    ..."
    else:
        yield head + " ..."


def methods(cls: type, items: dict) -> Iterator[str]:
    none = RustFn({}, None, "", False)
    new = items.get((cls.__name__, "new"))
    if new is not None:
        yield from function("__init__", ["self"] + params(cls, new), "None", new.doc, "    ")
    for name in sorted(n for n in dir(cls) if not n.startswith("_")):
        rust = items.get((cls.__name__, name), none)
        if rust.getter or type(getattr(cls, name)).__name__ == "getset_descriptor":
            yield "    @property"
            yield f"    def {name}(self) -> {py_type(rust.ret or '()')}: ..."
            continue
        ret = py_type(rust.ret) if rust.ret else "None"
        yield from function(name, ["self"] + params(getattr(cls, name), rust), ret, rust.doc,
                            "    ")


def stub() -> str:
    items = rust_items()
    lines = ['"""Type stub of p4scope_dataplane, the Rust engine\'s Python module',
             "(dataplane/src/py/). Written by `python -m p4scope.dev.engine_stub`;",
             'tests/dataplane/test_engine_stub.py holds it to the built module."""', "",
             "from typing import Any", "", "__version__: str",
             "SOURCE_HASH: str  # the sources the module was built from, hashed", ""]
    errors = sorted((n for n in dir(dp) if isinstance(getattr(dp, n), type)
                     and issubclass(getattr(dp, n), Exception)),
                    key=lambda n: len(getattr(dp, n).__mro__))
    for name in errors:
        base = getattr(dp, name).__mro__[1].__name__
        lines.append(f"class {name}({base}): ...")
    classes = sorted(n for n in dir(dp) if isinstance(getattr(dp, n), type) and n not in errors)
    for name in classes:
        lines += ["", f"class {name}:", *methods(getattr(dp, name), items)]
    for name in sorted(n for n in dir(dp) if inspect.isbuiltin(getattr(dp, n))):
        rust = items[(None, name)]
        ret = py_type(rust.ret) if rust.ret else "None"
        lines += ["", *function(name, params(getattr(dp, name), rust), ret, rust.doc, "")]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.stdout.write(stub())
