"""The hostile pass's machinery: probes, their verdicts, running a command
line with a time limit, and running an area's probes in a process of its own.

A probe tries one bad input and says what came of it:

- handled: the clean error or status that was due;
- wrong: it ran, but the answer was not the one due (OK where
  PERMISSION_DENIED was due, exit 0 where 2 was, a file written where none
  may be);
- crashed: a traceback, an internal error, a Rust panic, a process killed
  by a signal, or no answer within the time limit.

Each area (compiler CLI, P4Runtime, ...) runs in a child process of its own
(a new process group), so an engine that aborts or hangs costs that area's
remaining probes, never the pass: the parent marks them crashed and kills
the group.  An area whose parent has gone ends at its next report (a
broken pipe), stopping what it started on the way out.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
import traceback
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Optional, Sequence

HANDLED, WRONG, CRASHED = "handled", "wrong", "crashed"


@dataclass
class Verdict:
    status: str
    detail: str = ""


def handled(detail: str = "") -> Verdict:
    return Verdict(HANDLED, detail)


def wrong(detail: str) -> Verdict:
    return Verdict(WRONG, detail)


def crashed(detail: str) -> Verdict:
    return Verdict(CRASHED, detail)


@dataclass
class Probe:
    """One hostile input: `check(env)` tries it and returns a Verdict; an
    exception out of `check` is a crash of the thing probed."""

    name: str
    check: Callable[[Any], Verdict]
    fast: bool = True


@dataclass
class Result:
    area: str
    probe: str
    status: str
    detail: str
    seconds: float


# -- files ---------------------------------------------------------------------

class Workspace:
    """Fresh folders under one temporary root, one per probe."""

    def __init__(self, root: Path):
        self.root = root
        self._n = 0

    def fresh(self, name: str) -> Path:
        self._n += 1
        safe = "".join(c if c.isalnum() else "_" for c in name)[:40]
        d = self.root / f"{self._n:03d}-{safe}"
        d.mkdir(parents=True)
        return d


def tree(root: Path) -> set[str]:
    """Every path under `root`, relative, links not followed."""
    out = set()
    for dirpath, dirnames, filenames in os.walk(root):
        rel = Path(dirpath).relative_to(root)
        for n in dirnames + filenames:
            out.add(str(rel / n))
    return out


# -- command lines ---------------------------------------------------------------

TRACEBACK = "Traceback (most recent call last)"


@dataclass
class Ran:
    """What one command line did."""

    argv: list[str]
    code: Optional[int]  # exit status; None when killed
    signal: Optional[int] = None  # the signal that ended it (not ours)
    timed_out: bool = False
    stopped: bool = False  # ended by us because `stop_when` said so
    out: str = ""
    err: str = ""
    seconds: float = 0.0

    def crash(self) -> Optional[str]:
        """Why this run counts as a crash, or None."""
        if self.timed_out:
            return f"no exit within {self.seconds:.0f} s (hang)"
        if self.signal is not None:
            return f"died by signal {signal.Signals(self.signal).name}"
        if TRACEBACK in self.err:
            last = [ln for ln in self.err.splitlines() if ln.strip()][-1]
            return f"traceback: {last[:160]}"
        if "panicked at" in self.err:
            return "Rust panic: " + next(ln for ln in self.err.splitlines() if "panicked at" in ln)
        if "internal compiler error" in self.err or "internal error" in self.err.lower():
            return "internal error: " + self.first_err_line()
        if self.code == 3:
            return "exit status 3 (internal error): " + self.first_err_line()
        return None

    def first_err_line(self) -> str:
        lines = [ln for ln in self.err.splitlines() if ln.strip()]
        return lines[0][:200] if lines else "(no message)"


class Cli:
    """Runs `p4scope ARGS...` as a user would, with a time limit.

    "fork" (default): a child forked from this process, which has imported
    the CLI already, runs p4scope's entry point (p4scope.cli:main) with the
    arguments; a separate process with its own exit status, signals and
    output, without paying Python's start-up and imports per probe.
    "spawn": the installed `p4scope` executable (slower, nothing shared).
    """

    def __init__(self, mode: str = "fork"):
        self.mode = mode
        self.exe = str(Path(sys.executable).parent / "p4scope")

    def run(self, argv: Sequence[str], cwd: Path, timeout: float = 30.0,
            stop_when: Optional[Callable[[], bool]] = None) -> Ran:
        argv = [str(a) for a in argv]
        io_dir = cwd.parent / (cwd.name + ".io")
        io_dir.mkdir(exist_ok=True)
        paths = [io_dir / n for n in ("stdin", "stdout", "stderr")]
        paths[0].write_bytes(b"")
        env = {k: v for k, v in os.environ.items() if k != "P4SCOPE_DEBUG"}
        env.update(COLUMNS="200", NO_COLOR="1", TERM="dumb")
        t0 = time.monotonic()
        with open(paths[0], "rb") as i, open(paths[1], "wb") as o, open(paths[2], "wb") as e:
            if self.mode == "spawn":
                proc = subprocess.Popen([self.exe, *argv], cwd=cwd, stdin=i, stdout=o, stderr=e,
                                        env=env)
                pid = proc.pid
            else:
                sys.stdout.flush()
                sys.stderr.flush()
                pid = os.fork()
                if pid == 0:  # pragma: no cover - the child
                    _cli_child(argv, cwd, env, i.fileno(), o.fileno(), e.fileno())
        code, sig, timed_out, stopped = _wait(pid, t0 + timeout, stop_when)
        if self.mode == "spawn":
            proc.returncode = code if code is not None else -1  # reaped already
        ran = Ran(argv, code, sig, timed_out, stopped,
                  paths[1].read_text(errors="replace"), paths[2].read_text(errors="replace"),
                  time.monotonic() - t0)
        return ran


def _cli_child(argv, cwd, env, fd_in, fd_out, fd_err) -> None:  # pragma: no cover
    code = 1
    try:
        os.dup2(fd_in, 0)
        os.dup2(fd_out, 1)
        os.dup2(fd_err, 2)
        # Python's own streams on those descriptors (whatever replaced them here)
        sys.stdin = open(0, closefd=False)
        sys.stdout = open(1, "w", closefd=False)
        sys.stderr = open(2, "w", closefd=False)
        os.chdir(cwd)
        os.environ.clear()
        os.environ.update(env)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        sys.argv = ["p4scope", *argv]
        from p4scope.cli import main
        try:
            main()
            code = 0
        except SystemExit as e:
            if e.code is None:
                code = 0
            elif isinstance(e.code, int):
                code = e.code
            else:
                print(e.code, file=sys.stderr)
                code = 1
        except BaseException:
            traceback.print_exc()
            code = 1
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(code)


def _wait(pid: int, deadline: float, stop_when) -> tuple:
    """(exit code, signal, timed out, stopped) of child `pid`, killed
    (SIGKILL, by its pid) at `deadline` or once `stop_when()` is true."""
    pidfd = os.pidfd_open(pid)  # readable once the child has ended
    try:
        while True:
            got, status = os.waitpid(pid, os.WNOHANG)
            if got == pid:
                if os.WIFSIGNALED(status):
                    return None, os.WTERMSIG(status), False, False
                return os.WEXITSTATUS(status), None, False, False
            left = deadline - time.monotonic()
            stopped = left > 0 and stop_when is not None and stop_when()
            if left <= 0 or stopped:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                return None, None, left <= 0, stopped
            select.select([pidfd], [], [], min(left, 0.1) if stop_when else left)
    finally:
        os.close(pidfd)


# -- expectations of a command line ------------------------------------------------

@dataclass
class Expect:
    """What a handled command line does: one of `codes`, these texts on
    stderr, no file made in its folder but `may_make` (a name ending in /
    allows what is under it), these paths absent afterwards, these files
    unchanged, within `max_seconds`."""

    codes: tuple[int, ...] = (1,)
    says: tuple[str, ...] = ()
    may_make: tuple[str, ...] = ()
    absent: tuple[str, ...] = ()
    unchanged: tuple[str, ...] = ()
    max_seconds: Optional[float] = None
    also: Optional[Callable[[Ran, Path], Optional[str]]] = None  # extra check: why wrong


def judge(ran: Ran, cwd: Path, before: set[str], kept: dict[str, bytes],
          expect: Expect) -> Verdict:
    why = ran.crash()
    if why:
        return crashed(why)
    if ran.code not in expect.codes:
        return wrong(f"exit {ran.code} where {'/'.join(map(str, expect.codes))} was due: "
                     f"{ran.first_err_line()}")
    for text in expect.says:
        if text not in ran.err:
            return wrong(f"stderr does not say {text!r}: {ran.first_err_line()}")
    made = tree(cwd) - before
    extra = sorted(p for p in made
                   if not any(p == m or (m.endswith("/") and p.startswith(m))
                              for m in expect.may_make))
    if extra:
        return wrong(f"made {', '.join(extra[:3])}")
    for p in expect.absent:
        if os.path.lexists(p if os.path.isabs(p) else cwd / p):
            return wrong(f"{p} exists afterwards")
    for p, data in kept.items():
        q = cwd / p
        now = q.read_bytes() if q.is_file() else None
        if now != data:
            return wrong(f"{p} was changed")
    if expect.max_seconds is not None and ran.seconds > expect.max_seconds:
        return wrong(f"took {ran.seconds:.1f} s (at most {expect.max_seconds:g} s is due)")
    if expect.also is not None:
        problem = expect.also(ran, cwd)
        if problem:
            return wrong(problem)
    return handled(f"exit {ran.code}")


def cli_probe(name: str, argv: Callable[[Path, Any], Sequence[Any]] | Sequence[Any],
              expect: Expect, setup: Optional[Callable[[Path], None]] = None,
              timeout: float = 30.0, fast: bool = True,
              stop_when: Optional[Callable[[Path], bool]] = None) -> Probe:
    """A probe that runs `p4scope ARGV` in a fresh folder (after `setup`
    fills it) and judges the run by `expect`; `argv` may be a function of
    the folder and the area's environment."""

    def check(env) -> Verdict:
        cwd = env.workspace.fresh(name)
        if setup is not None:
            setup(cwd)
        before = tree(cwd)
        kept = {p: (cwd / p).read_bytes() for p in expect.unchanged}
        args = argv(cwd, env) if callable(argv) else argv
        ran = env.cli.run(args, cwd, timeout,
                          None if stop_when is None else (lambda: stop_when(cwd)))
        if ran.stopped:
            return wrong(f"accepted: it went on to run ({ran.first_err_line()})")
        return judge(ran, cwd, before, kept, expect)

    return Probe(name, check, fast)


# -- running an area in a child process ---------------------------------------------

@dataclass
class Area:
    """A named catalogue of probes and the environment they share."""

    name: str
    probes: Callable[[bool], list[Probe]]
    environment: Callable[["AreaContext"], Any]  # a context manager factory


@dataclass
class AreaContext:
    workspace: Workspace
    cli: Cli
    fast: bool
    extra: dict = field(default_factory=dict)


class AreaRun:
    """One area's probes running in a child process (a process group of
    its own); `feed` takes what the child reports, `finish` gives one Result
    per probe, in order (probes it never finished count as crashed)."""

    def __init__(self, area: Area, ctx: AreaContext, time_limit: float):
        self.area = area
        self.probes = area.probes(ctx.fast)
        self.results: dict[int, Result] = {}
        self.running: Optional[int] = None
        self.problem: Optional[str] = None
        self._buf = b""
        r_fd, w_fd = os.pipe()
        sys.stdout.flush()
        sys.stderr.flush()
        self.pid = os.fork()
        if self.pid == 0:  # pragma: no cover - the child
            os.close(r_fd)
            _area_child(area, ctx, self.probes, w_fd)
        os.close(w_fd)
        try:
            os.setpgid(self.pid, self.pid)  # as the child does: no race with a kill
        except OSError:
            pass
        self.fd = r_fd
        self.started = time.monotonic()
        self.deadline = self.started + time_limit

    def feed(self) -> bool:
        """Reads what the child wrote; False at its end."""
        chunk = os.read(self.fd, 65536)
        if not chunk:
            return False
        self._buf += chunk
        while b"\n" in self._buf:
            line, self._buf = self._buf.split(b"\n", 1)
            msg = json.loads(line)
            if msg["event"] == "start":
                self.running = msg["index"]
            elif msg["event"] == "done":
                self.results[msg["index"]] = Result(
                    self.area.name, self.probes[msg["index"]].name, msg["status"],
                    msg["detail"], msg["seconds"])
                self.running = None
            elif msg["event"] == "setup_failed":
                self.problem = f"the area's set-up failed: {msg['detail']}"
        return True

    def finish(self, hung: bool = False) -> list[Result]:
        os.close(self.fd)
        if hung:
            self.problem = (f"the area did not finish within "
                            f"{self.deadline - self.started:.0f} s (hang)")
            _kill_group(self.pid)
        status = _reap(self.pid)
        if self.problem is None and status:
            self.problem = f"the area's process ended with {status}"
        self.seconds = time.monotonic() - self.started
        out = []
        for i, p in enumerate(self.probes):
            if i in self.results:
                out.append(self.results[i])
                continue
            if i == self.running:
                detail = self.problem or "the area's process ended during this probe"
            else:
                detail = f"not run: {self.problem or 'the area ended early'}"
            out.append(Result(self.area.name, p.name, CRASHED, detail, 0.0))
        return out


def run_areas(plans: list[tuple[Area, AreaContext]], jobs: int, time_limit: float,
              on_done: Callable[[Area, list[Result], float], None]) -> None:
    """Runs the areas, at most `jobs` at once; `on_done(area, results,
    seconds)` as each ends."""
    waiting = list(plans)
    running: list[AreaRun] = []
    try:
        _run_areas(waiting, running, jobs, time_limit, on_done)
    finally:  # interrupted: end every area still running, and what it started
        for run in running:
            _kill_group(run.pid)
            _reap(run.pid)


def _run_areas(waiting, running, jobs, time_limit, on_done) -> None:
    while waiting or running:
        while waiting and len(running) < jobs:
            area, ctx = waiting.pop(0)
            running.append(AreaRun(area, ctx, time_limit))
        now = time.monotonic()
        for run in [r for r in running if r.deadline <= now]:
            running.remove(run)
            on_done(run.area, run.finish(hung=True), run.seconds)
        if not running:
            continue
        left = min(r.deadline for r in running) - now
        ready, _, _ = select.select([r.fd for r in running], [], [], max(0.0, min(left, 1.0)))
        for run in [r for r in running if r.fd in ready]:
            if not run.feed():
                running.remove(run)
                on_done(run.area, run.finish(), run.seconds)


def _area_child(area: Area, ctx: AreaContext, probes: list[Probe], w_fd: int) -> None:
    code = 0
    try:
        os.setpgid(0, 0)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)

        def send(**msg) -> None:
            os.write(w_fd, (json.dumps(msg) + "\n").encode())

        try:
            env_cm = area.environment(ctx)
            env = env_cm.__enter__()
        except Exception as e:  # noqa: BLE001 - reported as the area's crash
            send(event="setup_failed", detail=f"{type(e).__name__}: {e}")
            os._exit(0)
        try:
            for i, p in enumerate(probes):
                send(event="start", index=i)
                t0 = time.monotonic()
                try:
                    v = p.check(env)
                except Exception as e:  # noqa: BLE001 - the probed thing raised
                    v = crashed(_exception_text(e))
                send(event="done", index=i, status=v.status, detail=v.detail,
                     seconds=time.monotonic() - t0)
        finally:
            env_cm.__exit__(None, None, None)
    except BaseException:  # noqa: BLE001
        traceback.print_exc()
        code = 1
    finally:
        os._exit(code)


def _exception_text(e: BaseException) -> str:
    tb = traceback.extract_tb(e.__traceback__)
    where = f" (at {Path(tb[-1].filename).name}:{tb[-1].lineno})" if tb else ""
    return f"{type(e).__name__}: {str(e)[:200]}{where}"


def _kill_group(pid: int) -> None:
    """SIGKILL to an area's process group (the area's child and whatever it
    started), when it hung."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _reap(pid: int) -> Optional[str]:
    _, status = os.waitpid(pid, 0)
    try:
        os.killpg(pid, signal.SIGKILL)  # anything of the area's left behind
    except (ProcessLookupError, PermissionError):
        pass
    if os.WIFSIGNALED(status):
        return f"signal {signal.Signals(os.WTERMSIG(status)).name}"
    if os.WEXITSTATUS(status):
        return f"exit status {os.WEXITSTATUS(status)}"
    return None


@contextmanager
def no_environment(ctx: AreaContext) -> Iterator[AreaContext]:
    yield ctx
