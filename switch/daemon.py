"""The switch daemon: simple_switch_grpc's command line, p4scope's engine.

    p4scope switch -i 1@veth1 -i 2@veth3 build/x.json --log-console \\
        -- --grpc-server-addr 127.0.0.1:9559 --cpu-port 255

`p4scope switch` and `p4scope-switch-grpc` (`main`) are simple_switch_grpc;
`p4scope-switch` (`main_simple`) is simple_switch: its command line, the
Thrift API and no gRPC server, so that several run side by side.

Start-up: parse the command line (exit 2 on a usage error), load the JSON
(if any), open the ports, start the P4Runtime and Thrift servers.
Readiness: once they accept connections, one line "p4scope switch: ready:
..." goes to stderr and, with `-- --ready-file F`, F is written atomically
(it holds the gRPC address; without gRPC, the Thrift one). SIGINT or
SIGTERM stops the servers, closes the ports, removes the ready file and
exits 0.
"""

from __future__ import annotations

import errno
import logging
import os
import signal
import sys
import threading
import time
from typing import Optional

from .device import Device, DeviceOptions
from .engine import EngineAdapter, EngineOptions, default_engine_factory
from .options import HELP, SIMPLE_HELP, SwitchOptions, UsageError, parse_args

PROG = "p4scope switch"
SIMPLE_PROG = "p4scope-switch"
TRACE = 5
_LEVELS = {"trace": TRACE, "debug": logging.DEBUG, "info": logging.INFO,
           "warn": logging.WARNING, "error": logging.ERROR, "off": logging.CRITICAL + 10}
JSON_VERSION = "2.24"
SERVER_STOP_S = 2.0
"""How long a stop waits for the gRPC server (0.5 s of grace for its RPCs)."""

log = logging.getLogger("p4scope.switch")


class _Bmv2Format(logging.Formatter):
    """BMv2's log line: [time] [bmv2] [level] [thread id] message."""

    _short = {TRACE: "T", logging.DEBUG: "D", logging.INFO: "I", logging.WARNING: "W",
              logging.ERROR: "E", logging.CRITICAL: "C"}

    def format(self, record: logging.LogRecord) -> str:
        t = time.strftime("%H:%M:%S", time.localtime(record.created))
        ms = int(record.msecs)
        lvl = self._short.get(record.levelno, "I")
        return f"[{t}.{ms:03d}] [p4scope] [{lvl}] [thread {record.thread % 100000}] " \
               f"{record.getMessage()}"


class _FlushingFileHandler(logging.FileHandler):
    def __init__(self, path: str, flush_each: bool):
        super().__init__(path, encoding="utf-8")
        self.flush_each = flush_each

    def emit(self, record):
        super().emit(record)
        if self.flush_each:
            self.flush()


def prog_name(grpc: bool) -> str:
    """How messages name the daemon: simple_switch_grpc's or simple_switch's."""
    return PROG if grpc else SIMPLE_PROG


def setup_logging(o: SwitchOptions, prog: str = PROG) -> None:
    logging.addLevelName(TRACE, "TRACE")
    root = logging.getLogger("p4scope.switch")
    root.handlers.clear()
    root.propagate = False
    level = _LEVELS[o.log_level]
    err = logging.StreamHandler(sys.stderr)
    err.setLevel(logging.WARNING)
    err.setFormatter(logging.Formatter(f"{prog}: %(levelname)s: %(message)s"))
    if o.log_console:
        h: logging.Handler = logging.StreamHandler(sys.stdout)
    elif o.log_file:
        h = _FlushingFileHandler(o.log_file, o.log_flush)
        root.addHandler(err)  # warnings also reach the terminal
    else:
        h = err
        level = max(level, logging.WARNING)
    if h is not err:
        h.setFormatter(_Bmv2Format())
    root.addHandler(h)
    root.setLevel(level)


def _apply_tm_config(engine: EngineAdapter, cfg: dict) -> None:
    """Hand p4scope's traffic-manager configuration (--tm-config: line rates,
    buffers, shared buffer, schedulers, arbitration, ECN; format in
    dataplane/src/tm/config.rs) to the engine; checked at start-up."""
    raw = getattr(engine, "raw", None)
    if raw is not None:
        raw.tm_configure(cfg)


def _credentials(o: SwitchOptions):
    if not o.grpc_server_ssl:
        return None
    import grpc

    def read(p: Optional[str]) -> Optional[bytes]:
        if not p:
            return None
        with open(p, "rb") as f:
            return f.read()

    return grpc.ssl_server_credentials(
        [(read(o.grpc_server_key), read(o.grpc_server_cert))],
        root_certificates=read(o.grpc_server_cacert),
        require_client_auth=o.grpc_server_with_client_auth)


def _write_ready(path: str, text: str) -> None:
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text + "\n")
    os.replace(tmp, path)


class SwitchDaemon:
    """A running daemon (also usable in-process by tests)."""

    def __init__(self, o: SwitchOptions):
        self.o = o
        self.server = None
        self.port = 0
        self.ports = None
        self.rt_ports = None  # RtPorts when the engine serves -i itself
        self.link_monitor = None  # LinkMonitor of the -i interfaces (with rt_ports)
        self.stopped = threading.Event()
        self.grpc_workers = None  # the executor running the gRPC request handlers
        self.server_stuck = False
        """A gRPC request handler did not end in time after the stop: the
        process must not wait for its thread at exit."""

        def factory(json_text: str, eo: EngineOptions) -> EngineAdapter:
            e = default_engine_factory(json_text, eo)
            if o.tm_config:
                _apply_tm_config(e, o.tm_config)
            return e

        self.device = Device(DeviceOptions(
            device_id=o.device_id, cpu_port=o.cpu_port or 0, drop_port=o.drop_port,
            priority_queues=o.priority_queues, seed=o.seed,
            dump_packet_data=o.dump_packet_data), engine_factory=factory)
        from .thrift.handler import PortsView, RuntimeApi
        self.runtime_api = RuntimeApi(
            self.device, o.thrift_port,
            PortsView(list=lambda: [(p, name, self._port_up(p))
                                    for p, name in sorted(o.interfaces)]),
            max_l1=o.max_l1_entries, max_groups=o.max_mc_groups)
        self.runtime_server = None
        self.metrics = None

    def start(self) -> None:
        o = self.o
        ifaces = dict(o.interfaces)
        from .ports import RtPorts
        if ifaces and o.use_files is None:
            # before the JSON loads: loading it attaches the ports to its engine
            from .link_state import LinkMonitor
            self.rt_ports = RtPorts(self.device, ifaces, o.cpu_port or 0, o.pcap_dir,
                                    dump_bytes=o.dump_packet_data)
            self.link_monitor = LinkMonitor(self.device, ifaces)
            self.device.on_dataplane = self._attach_ports
            self.device.inject = self.rt_ports.inject
            log.info("ports: the engine's real-time loop")
        if o.json_path:
            with open(o.json_path, encoding="utf-8") as f:
                self.device.load_json(f.read())
            if self.rt_ports is not None and self.rt_ports.engine is None:
                raise RuntimeError("the engine cannot open the ports (see the log)")
        if o.use_files is not None:
            from .ports import FilePorts
            self.ports = FilePorts(ifaces, o.use_files)
        if self.ports is not None:
            self.device.transmit = self.ports.send
        self.device.start()
        if o.grpc:  # simple_switch has no gRPC server
            self._start_grpc_server()
        self._start_runtime_server()
        self._start_metrics()
        if self.ports is not None:
            self.ports.start(self.device.receive)
        if self.rt_ports is not None:
            self.rt_ports.start()
        if self.link_monitor is not None:
            self.link_monitor.start()

    def _attach_ports(self, old, new) -> None:
        """A new engine forwards: the ports move to it, and it is told
        which of them are down (device lock held)."""
        self.rt_ports.attach(old, new)
        self.link_monitor.apply(new)

    def _port_up(self, port: int) -> bool:
        """What show_ports says of a port (--use-files ports are always up)."""
        return self.link_monitor.is_up(port) if self.link_monitor is not None else True

    def _start_grpc_server(self) -> None:
        from concurrent import futures

        from .p4runtime.server import WORKER_PREFIX, make_server
        o = self.o
        self.grpc_workers = futures.ThreadPoolExecutor(max_workers=64,
                                                       thread_name_prefix=WORKER_PREFIX)
        try:
            self.server, self.port = make_server(self.device, o.grpc_server_addr, _credentials(o),
                                                 executor=self.grpc_workers)
        except RuntimeError as e:  # grpc's "Failed to bind": with TLS, often the PEM pair
            if not o.grpc_server_ssl:
                raise
            raise RuntimeError(f"{e} (with --grpc-server-ssl: are --grpc-server-cert and "
                               "--grpc-server-key a certificate chain and its own key?)") from None

    def _start_runtime_server(self) -> None:
        """BMv2's Thrift API on --thrift-port; a port in use ends the start
        as in BMv2 (bm_runtime's serve()), unless -- --no-thrift."""
        from .thrift.server import RuntimeServer
        o = self.o
        if o.no_thrift:
            return
        srv = RuntimeServer(self.runtime_api, o.thrift_ip, o.thrift_port, allow_remote=True)
        try:
            srv.start()
        except OSError as e:
            raise RuntimeError(
                f"Thrift returned an exception when trying to bind to port {o.thrift_port} "
                f"({o.thrift_ip}): {e.strerror or e}. You may have another process already "
                "using this port, maybe another instance of bmv2 (-- --no-thrift runs without "
                "the Thrift API)") from None
        self.runtime_server = srv

    def _start_metrics(self) -> None:
        """The queue statistics for Prometheus on -- --metrics-port (a port
        in use is a usage error: exit 2 naming the option)."""
        o = self.o
        if o.metrics_port is None:
            return
        from .metrics import MetricsServer
        try:
            self.metrics = MetricsServer(self.device, f"device-{o.device_id}", o.metrics_port,
                                         o.metrics_address)
        except OSError as e:
            if e.errno == errno.EADDRINUSE:
                raise UsageError(f"--metrics-port {o.metrics_port}: port {o.metrics_port} on "
                                 f"{o.metrics_address} is taken ({e.strerror})") from None
            raise UsageError(f"--metrics-address {o.metrics_address}: cannot listen there "
                             f"({e.strerror or e})") from None

    @property
    def thrift_address(self) -> Optional[str]:
        srv = self.runtime_server
        return None if srv is None else f"{srv.host}:{srv.port}"

    @property
    def address(self) -> Optional[str]:
        """The gRPC server's address (None as simple_switch)."""
        if self.server is None:
            return None
        host = self.o.grpc_server_addr.rpartition(":")[0]
        return f"{host}:{self.port}"

    def ready_line(self) -> str:
        """The ready line's text: the servers (gRPC first), device and ports."""
        o = self.o
        grpc, thrift = self.address, self.thrift_address
        first = (f"P4Runtime on {grpc}" if grpc
                 else f"Thrift on {thrift}" if thrift else "no server")
        return (f"{first}, device {o.device_id}, {len(o.interfaces)} port(s)"
                + (f", CPU port {o.cpu_port}" if o.cpu_port else "")
                + (f", Thrift on {thrift}" if grpc and thrift else "")
                + (f", metrics on http://{self.metrics.address}/metrics" if self.metrics else ""))

    def stop(self) -> None:
        if self.stopped.is_set():
            return
        self.stopped.set()
        if self.runtime_server is not None:
            self.runtime_server.stop()
        if self.metrics is not None:
            self.metrics.stop()
        if self.server is not None:
            self.server.stop(grace=0.5).wait(SERVER_STOP_S)
        if self.grpc_workers is not None:
            self.grpc_workers.shutdown(wait=False, cancel_futures=True)
            stuck = _handlers_running(SERVER_STOP_S)
            if stuck:
                self.server_stuck = True
                log.warning("%d P4Runtime request handler(s) still running %.0f s after the "
                            "stop; the switch ends without waiting for them", len(stuck),
                            SERVER_STOP_S)
        if self.ports is not None:
            self.ports.close()
        if self.link_monitor is not None:
            self.link_monitor.close()
        if self.rt_ports is not None:
            self.rt_ports.close()
        self.device.stop()


def run(o: SwitchOptions, prog: str = PROG) -> int:
    setup_logging(o, prog)
    for w in o.warnings:
        print(f"{prog}: warning: {w}", file=sys.stderr)
    stop = threading.Event()

    def on_signal(signum, frame):
        stop.set()

    # handlers first: a SIGTERM during start-up still ends in a clean stop
    old = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    sw = SwitchDaemon(o)
    served = False
    status = 1
    try:
        try:
            sw.start()
        except UsageError as e:
            print(f"{prog}: error: {e}", file=sys.stderr)
            status = 2
            return status
        except Exception as e:  # start-up failures end the process cleanly
            msg = getattr(e, "message", None) or str(e)
            print(f"{prog}: error: cannot start: {msg}", file=sys.stderr)
            return status
        if o.ready_file:
            _write_ready(o.ready_file, sw.address or sw.thrift_address or "")
        print(f"{prog}: ready: {sw.ready_line()}", file=sys.stderr, flush=True)
        if sw.address:
            log.info("P4Runtime server listening on %s", sw.address)
        served = True
        while not stop.wait(0.5):
            pass
        status = 0
        return status
    finally:
        sw.stop()
        if served:
            print(f"{prog}: stopped", file=sys.stderr, flush=True)
        if o.ready_file:
            try:
                os.unlink(o.ready_file)
            except OSError:
                pass
        for s, h in old.items():
            signal.signal(s, h)
        if sw.server_stuck:
            _exit_now(status)


def _handlers_running(wait_s: float) -> list[str]:
    """The gRPC handler threads still alive after up to `wait_s` seconds
    (idle ones end at once once their executor is shut down)."""
    from .p4runtime.server import WORKER_PREFIX
    deadline = time.monotonic() + wait_s
    while True:
        alive = [t.name for t in threading.enumerate()
                 if t.name.startswith(f"{WORKER_PREFIX}_") and t.is_alive()]
        if not alive or time.monotonic() >= deadline:
            return alive
        time.sleep(0.02)


def _exit_now(status: int) -> None:
    """Ends the process without joining the gRPC server's worker threads
    (Python joins them at exit, forever for one that is stuck, and the
    SIGTERM that asked for the stop is spent by then)."""
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)


def recover_argv(word: str, parsed: list[str]) -> tuple[list[str], bool]:
    """The raw words after subcommand `word`, when a CLI framework has eaten
    the `--` separator from `parsed`; (words, strict) for parse_args."""
    raw = sys.argv[1:]
    if word in raw:
        tail = raw[raw.index(word) + 1:]
        if [t for t in tail if t != "--"] == [t for t in parsed if t != "--"]:
            return tail, True
    return list(parsed), "--" in parsed


def main(argv: Optional[list[str]] = None, strict_separator: bool = True,
         grpc: bool = True) -> int:
    """simple_switch_grpc (`p4scope switch`, `p4scope-switch-grpc`), or
    simple_switch with `grpc` False."""
    argv = sys.argv[1:] if argv is None else argv
    prog = prog_name(grpc)
    try:
        o = parse_args(argv, strict_separator=strict_separator, grpc=grpc)
    except UsageError as e:
        print(f"{prog}: error: {e}\nTry '{prog} --help'.", file=sys.stderr)
        return 2
    if o.action == "help":
        print(HELP if grpc else SIMPLE_HELP, end="")
        return 0
    if o.action == "version":
        from importlib.metadata import version

        __version__ = version("p4scope")
        print(f"p4scope switch {__version__} (simple_switch_grpc command line, P4Runtime 1.3.0)"
              if grpc else f"p4scope switch {__version__} (simple_switch command line)")
        return 0
    if o.action == "json-version":
        print(JSON_VERSION)
        return 0
    return run(o, prog)


def main_simple(argv: Optional[list[str]] = None) -> int:
    """`p4scope-switch`: simple_switch (Thrift only, no gRPC server)."""
    return main(argv, grpc=False)


if __name__ == "__main__":
    sys.exit(main())
