"""The packages of p4scope, found in its folders: the parts that make up
the `p4scope` namespace are mapped here once (scripts/ is the package
root, compiler/ is p4scope.compiler, ...), and every folder below them
with an __init__.py is a subpackage, so a new one (an experiment's folder)
needs no entry anywhere. pyproject.toml holds the rest of the metadata."""

from pathlib import Path

from setuptools import setup

PARTS = {"p4scope": "scripts", "p4scope.compiler": "compiler", "p4scope.switch": "switch",
         "p4scope.control": "control", "p4scope.topologies": "topologies"}
DATA_ONLY = {"p4scope.compiler.p4include": "compiler/p4include"}  # P4 includes, no code


def packages() -> dict[str, str]:
    out = dict(DATA_ONLY)
    for name, folder in PARTS.items():
        for init in sorted(Path(folder).rglob("__init__.py")):
            rel = init.parent.relative_to(folder).parts
            out[".".join((name, *rel))] = init.parent.as_posix()
    return out


found = packages()
setup(packages=sorted(found), package_dir=found)
