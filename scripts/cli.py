"""The `p4scope` command line: one tool, one subcommand per job."""

from __future__ import annotations

import os
import signal
import sys
import threading
from pathlib import Path
from typing import List, Optional


def _interrupted_while_starting(signum: int, frame: object) -> None:
    """Ctrl-C while the command's modules load: nothing has begun, so the
    command ends as an interrupted one does (status 130), without the
    traceback of an import cut short."""
    raise SystemExit(130)


# for this module's imports only (the end of the module puts Python's
# handler back; a command then handles Ctrl-C itself); an ignored SIGINT
# stays ignored
_SIGINT_BEFORE = (signal.signal(signal.SIGINT, _interrupted_while_starting)
                  if threading.current_thread() is threading.main_thread()
                  and signal.getsignal(signal.SIGINT) is not signal.SIG_IGN else None)

# Set before numpy and pyarrow load; worker processes inherit them. Cases
# run one per core: an OpenBLAS thread pool in each worker would only spin
# against the others. Arrow's default pool (mimalloc) takes fresh huge
# pages for the cases' tables and gives them back, so the kernel zeroes
# 2 MiB at a time; glibc's reuses its heap (a microburst run's system time
# 0.9-1.0 s -> 0.55 s).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "system")
# ... so pyarrow's jemalloc, unused, need not start its background thread
# either: the forkserver that forks a run's processes (experiments/processes.py)
# then imports pyarrow without a thread of its own to leave behind at a fork.
os.environ.setdefault("JE_ARROW_MALLOC_CONF", "background_thread:false")
# numpy asks for transparent huge pages for each array of 4 MiB or more;
# where the kernel compacts memory to find them (THP defrag "madvise", the
# default), a first touch can wait for that: the main job's system time
# 3.8-4.8 s -> 2.9-3.1 s without, and the run's 330 MB concatenation of
# the instrument's series 0.5-1.0 s -> 0.2 s.
os.environ.setdefault("NUMPY_MADVISE_HUGEPAGE", "0")


def _measures_in_processes(argv: list[str]) -> bool:
    """The main job, or a virtual-time run that will measure in worker
    processes: not `--jobs 1`, not in Mininet, not on a Dask cluster, not
    only its help."""
    if argv[1:2] == ["main"]:
        return True
    if argv[1:2] != ["run"] or argv[2:3] in (["tcp-incast"], []):
        return False
    args = " ".join(argv[3:]).replace("=", " ").split()
    pairs = set(zip(args, args[1:]))
    return not ({("--jobs", "1"), ("--mode", "mininet")} & pairs
                or {"--help", "--cluster", "--chain"} & set(args))


def _processes_early() -> None:
    """A run's case workers and drawing processes come from a forkserver
    (experiments/processes.py) that imports pandas, the engine and
    matplotlib first: started before this module imports the commands,
    its imports (0.7 s) run beside these (0.6 s) and the DUT's compile
    instead of after them, on the other core. (Its children run the
    `p4scope` script again as multiprocessing's spawn does, with the same
    arguments: they must not start one of their own.)"""
    import multiprocessing

    if (_measures_in_processes(sys.argv) and (os.cpu_count() or 1) > 1
            and multiprocessing.current_process().name == "MainProcess"):
        from .experiments.processes import start_server

        start_server()


_processes_early()

import typer  # noqa: E402

from . import __version__, stacks  # noqa: E402

stacks.on_sigusr1()

app = typer.Typer(
    name="p4scope",
    help="P4 switch testbed: compiler, switch, experiments and reports.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"p4scope {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                 help="Print the version and exit."),
) -> None:
    pass


def _list_passes(value: bool) -> None:
    if value:
        from .compiler.driver import pass_listing

        typer.echo(pass_listing(), nl=False)
        raise typer.Exit()


@app.command("compile", context_settings={"allow_interspersed_args": True})
def compile_cmd(
    program: Path = typer.Argument(..., help="P4-16 source file."),
    output: Optional[str] = typer.Option(
        None, "-o", "--output",
        help="BMv2 JSON output file, or an existing directory (as p4c's driver takes it)."),
    p4info: Optional[Path] = typer.Option(
        None, "--p4info", "--p4runtime-files", "--p4runtime-file",
        help="P4Info output; the format follows the extension (.txt/.txtpb text, .bin binary, .json JSON)."),
    p4runtime_format: Optional[str] = typer.Option(
        None, "--p4runtime-format", help="text, binary or json (overrides the extension)."),
    include: List[Path] = typer.Option([], "-I", help="Add a directory to the include path."),
    define: List[str] = typer.Option([], "-D", help="Define a preprocessor macro NAME[=VALUE]."),
    p4v: Optional[str] = typer.Option(None, "--p4v", help="Accepted for p4c compatibility: must be 16."),
    std: Optional[str] = typer.Option(None, "--std", help="Accepted for p4c compatibility: must be p4-16."),
    target: Optional[str] = typer.Option(None, "--target", help="Accepted for p4c compatibility: bmv2."),
    arch: Optional[str] = typer.Option(None, "--arch", help="Accepted for p4c compatibility: v1model."),
    dump_after: List[str] = typer.Option(
        [], "--dump-after", metavar="PASS[,PASS...]",
        help="Print what PASS made to standard output once it has run (as p4c's --top4): "
             "source text, syntax tree (with types after 'check'), block tree, P4Info or "
             "JSON. Repeatable; with several passes each dump is headed '==> PASS <=='."),
    list_passes: bool = typer.Option(
        False, "--list-passes", callback=_list_passes, is_eager=True,
        help="Print the compiler's passes in the order they run, and exit."),
) -> None:
    """Compile a P4-16 v1model program to BMv2 JSON and P4Info."""
    from .commands.compile import run_compile

    code = run_compile(program, output, p4info, p4runtime_format, include, define,
                       p4v=p4v, std=std, target=target, arch=arch, dump_after=dump_after)
    raise typer.Exit(code)


@app.command("switch", add_help_option=False, context_settings={
    "ignore_unknown_options": True, "allow_extra_args": True, "help_option_names": []})
def switch_cmd(ctx: typer.Context) -> None:
    """Run the switch: simple_switch_grpc's command line (see --help)."""
    from .switch.daemon import main as switch_main, recover_argv

    argv, strict = recover_argv("switch", ctx.args)
    raise typer.Exit(switch_main(argv, strict_separator=strict))


@app.command("switch-cli", add_help_option=False, context_settings={
    "ignore_unknown_options": True, "allow_extra_args": True, "help_option_names": []})
def switch_cli_cmd(ctx: typer.Context) -> None:
    """simple_switch_CLI for a running switch: BMv2's run-time commands over Thrift."""
    from .control.switch_cli.main import main as cli_main

    raise typer.Exit(cli_main(list(ctx.args)))


@app.command("main")
def main_job() -> None:
    """The README main job: compile every program in p4src/, then run the
    microburst and fairness experiments on the embedded switch (virtual
    time, both traffic-manager profiles) and say where the report is."""
    from .commands.compile import compile_all
    from .experiments.cli import main_run

    code = compile_all(Path("p4src"), Path("build"))
    if code != 0:
        raise typer.Exit(code)
    raise typer.Exit(main_run())


from .bench.compile import app as _bench_app  # noqa: E402
from .bench.p4runtime import bench_p4runtime as _bench_p4runtime  # noqa: E402
from .conformance.cli import app as _conformance_app  # noqa: E402

app.add_typer(_conformance_app, name="conformance")
app.add_typer(_bench_app, name="bench")
_bench_app.command("p4runtime")(_bench_p4runtime)

from .commands.stf import cli_stf, cli_stf_dir  # noqa: E402

from .bench.mininet import bench_mininet_tcp as _bench_mininet_tcp  # noqa: E402
from .bench.realtime import bench_realtime as _bench_realtime  # noqa: E402
from .bench.trafgen import bench_trafgen as _bench_trafgen  # noqa: E402
from .topologies.cli import clean_cmd as _clean_cmd, topo_app as _topo_app  # noqa: E402

_bench_app.command("trafgen")(_bench_trafgen)
_bench_app.command("realtime")(_bench_realtime)
_bench_app.command("mininet-tcp")(_bench_mininet_tcp)
from .bench.live import bench_live as _bench_live  # noqa: E402
from .bench.fabric import bench_fabric as _bench_fabric  # noqa: E402
from .bench.instructions import bench_instructions as _bench_instructions  # noqa: E402

_bench_app.command("live")(_bench_live)
_bench_app.command("fabric")(_bench_fabric)
_bench_app.command("instructions")(_bench_instructions)
app.command("clean")(_clean_cmd)
app.add_typer(_topo_app, name="topo")

app.command("stf")(cli_stf)
app.command("stf-dir")(cli_stf_dir)

from .experiments.cli import report_cmd as _report_cmd, run_app as _run_app  # noqa: E402

app.add_typer(_run_app, name="run")
app.command("report")(_report_cmd)

from .experiments.live.cli import watch_cmd as _watch_cmd  # noqa: E402

app.command("watch")(_watch_cmd)


from .ptf.cmd import ptf_cmd as _ptf_cmd  # noqa: E402

app.command("ptf", context_settings={"allow_extra_args": True,
                                     "ignore_unknown_options": True})(_ptf_cmd)


if _SIGINT_BEFORE is not None:
    signal.signal(signal.SIGINT, _SIGINT_BEFORE)


def main() -> None:
    try:
        app(prog_name="p4scope")
    except KeyboardInterrupt:
        # Ctrl-C while typer built the command, before it ran (once it
        # runs, typer turns one into exit status 130 itself)
        raise SystemExit(130) from None


if __name__ == "__main__":
    main()
