"""The experiments are plug-ins: the CLI, the report, the seed CSVs and
results/README.md's table list all follow the registry."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from p4scope.cli import app
from p4scope.experiments import registry

ROOT = Path(__file__).resolve().parents[2]


def test_every_experiment_is_a_run_command():
    r = CliRunner().invoke(app, ["run", "--help"], env={"COLUMNS": "200"})
    assert r.exit_code == 0
    for name in registry.experiments():
        assert f" {name} " in r.output, name


def test_results_readme_lists_every_table_and_csv():
    text = (ROOT / "results" / "README.md").read_text()
    for e in registry.experiments().values():
        for table in e.tables:
            assert f"`{table}.parquet`" in text, f"{e.name}: {table}"
        for csv in e.csv_files:
            assert f"`{csv}.csv`" in text, f"{e.name}: {csv}"


def test_every_experiment_has_a_report_section_and_the_report_draws_them():
    sections = registry.sections()
    for e in registry.experiments().values():
        assert e.sections, e.name
        assert all(s in sections for s in e.sections)


def test_a_new_experiment_is_one_registry_line(monkeypatch, tmp_path):
    """A plug-in folder named in PLUGINS is found by name; nothing else in
    the framework lists experiments."""
    import sys
    import types

    mod = types.ModuleType("p4scope.experiments.probe")
    called = []
    mod.PLUGIN = registry.Experiment(
        name="probe", summary="a probe", command=lambda: None,
        tables={"probe_rows": "rows"}, csv_files={"probe_csv": "a csv"},
        write_csvs=lambda run: called.append(run) or [],
        sections=(lambda page: called.append(page),))
    monkeypatch.setitem(sys.modules, "p4scope.experiments.probe", mod)
    monkeypatch.setattr(registry, "PLUGINS", registry.PLUGINS + ("probe",))
    assert "probe" in registry.experiments()
    assert mod.PLUGIN.sections[0] in registry.sections()
    from p4scope.experiments.rundir import RunDir

    run = RunDir.create(tmp_path, "probe", "p")
    run.start({})
    assert registry.write_csvs(run) == []  # no tables: no CSV, and the probe was asked
    assert called == [run]


def test_experiments_import_no_other_experiment_and_the_framework_none():
    """The plug-in contracts, from the registry: an experiment imports no
    other experiment; nothing under experiments/ but the CLI that lists
    them imports an experiment (the registry finds them by name)."""
    import grimp

    graph = grimp.build_graph("p4scope", include_external_packages=False)
    plugins = [f"p4scope.experiments.{f}" for f in registry.PLUGINS]
    for a in plugins:
        for b in plugins:
            if a != b:
                assert not graph.chain_exists(a, b, as_packages=True), f"{a} imports {b}"
    framework = graph.find_children("p4scope.experiments") - set(plugins) - {
        "p4scope.experiments.cli"}
    assert {"p4scope.experiments.runner", "p4scope.experiments.tester",
            "p4scope.experiments.live"} <= framework
    for m in sorted(framework):
        for p in plugins:
            assert not graph.chain_exists(m, p, as_packages=True), f"{m} imports {p}"
