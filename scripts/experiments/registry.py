"""Every experiment `p4scope run` knows, registered once.

An experiment is one folder (a subpackage of p4scope.experiments) whose
`__init__.py` defines `PLUGIN`, an `Experiment`: its command, the
tables it stores and the seed-shaped CSVs it derives, its report
sections, and (for the experiments measured on the reference DUT in
virtual time) how its cases are planned and measured there. The runner,
the CLI (`p4scope run NAME`), `p4scope report`, the seed CSVs and the
table list of results/README.md all come from here; adding an experiment
is its folder plus one line in PLUGINS.

Plug-ins are imported by name when first asked for, so the framework
modules that consult the registry never import an experiment themselves.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from importlib import import_module
from typing import Any, Callable, Mapping, Optional, Sequence

PLUGINS = ("microburst", "fairness", "tcp_incast", "rfc2544", "frame_loss", "features", "lag_hash",
           "lag_failover", "rfc2889", "lossless")
"""The experiment folders, in the order their report sections appear."""


@dataclass(frozen=True)
class VirtualDut:
    """How an experiment runs on the reference DUT in virtual time, under
    the traffic-manager profiles (the shared driver does the rest):
    plan(params, profiles) -> cases; measure(vs, profile, case, tick) ->
    tables; theory(profile, params) -> run.json's theory lines."""

    plan: Callable[[Any, Mapping[str, Any]], list]
    measure: Callable[..., dict]
    theory: Callable[[Any, Any], list[dict[str, Any]]] = lambda profile, params: []


@dataclass(frozen=True)
class Experiment:
    name: str
    """`p4scope run NAME` and the `experiment` of its cases."""
    summary: str
    command: Callable[..., None]
    """The typer command of `p4scope run NAME`."""
    tables: Mapping[str, str] = field(default_factory=dict)
    """Parquet tables it stores -> what one row is (results/README.md)."""
    csv_files: Mapping[str, str] = field(default_factory=dict)
    """Seed-shaped CSVs it derives -> what they hold."""
    write_csvs: Optional[Callable[[Any], list[str]]] = None
    """write_csvs(run_dir) after the tables are consolidated; returns the names written."""
    sections: Sequence[Callable[[Any], None]] = ()
    """Report sections (each draws only what the run has)."""
    virtual: Optional[VirtualDut] = None
    modes: tuple[str, ...] = ("virtual",)


def experiments() -> dict[str, Experiment]:
    """name -> Experiment, in PLUGINS order."""
    out = {}
    for folder in PLUGINS:
        e = import_module(f"{__package__}.{folder}").PLUGIN
        out[e.name] = e
    return out


def get(name: str) -> Experiment:
    try:
        return experiments()[name]
    except KeyError:
        raise KeyError(f"no experiment {name!r} (known: {', '.join(experiments())})") from None


def write_csvs(run: Any) -> list[str]:
    """Every experiment's seed-shaped CSVs that the run's tables allow."""
    written: list[str] = []
    for e in experiments().values():
        if e.write_csvs is not None:
            written += e.write_csvs(run)
    return written


def sections() -> list[Callable[[Any], None]]:
    """Every experiment's report sections, in PLUGINS order."""
    return [s for e in experiments().values() for s in e.sections]
