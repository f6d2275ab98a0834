"""simple_switch_grpc's and simple_switch's command lines (BMv2
options_parse.cpp, targets/simple_switch_grpc/main.cpp and
targets/simple_switch/main.cpp), parsed without surprises.

    p4scope switch [GENERAL OPTIONS] [program.json | --no-p4] [-- TARGET OPTIONS]
    p4scope-switch ...   (simple_switch: no gRPC server, its target options)

General options come before `--`, target options after it, as BMv2 wants
them. Every option BMv2 knows is accepted; the few p4scope cannot honour
(nanomsg sockets, the debugger, --restore-state) are accepted with a
warning so existing scripts keep working. An unknown option or a bad value
is an error with exit status 2. Unlike BMv2, the gRPC server listens on
127.0.0.1:9559 unless --grpc-server-addr says otherwise (BMv2: 0.0.0.0).
Which binary is meant is the caller's choice (`grpc`), as BMv2's binary
name is: simple_switch knows none of simple_switch_grpc's target options.
"""

from __future__ import annotations

import ipaddress
import json
import os
from dataclasses import dataclass, field
from typing import Optional

DEFAULT_GRPC_ADDR = "127.0.0.1:9559"
LOG_LEVELS = ("trace", "debug", "info", "warn", "error", "off")
INT_MAX = 2**31 - 1


class UsageError(Exception):
    """A command-line error: the daemon prints it and exits with status 2."""


@dataclass
class SwitchOptions:
    interfaces: list[tuple[int, str]] = field(default_factory=list)
    json_path: Optional[str] = None
    no_p4: bool = False
    device_id: int = 0
    log_console: bool = False
    log_file: Optional[str] = None
    log_level: str = "trace"
    log_flush: bool = False
    log_file_max_size: int = 5 * 1024 * 1024
    log_file_max_files: int = 3
    pcap_dir: Optional[str] = None
    use_files: Optional[int] = None
    thrift_port: int = 9090
    thrift_ip: str = "127.0.0.1"
    """p4scope: address of the run-time (Thrift) server; BMv2 listens on all."""
    no_thrift: bool = False
    """p4scope: serve no Thrift API (as simple_switch_grpc built without Thrift)."""
    grpc: bool = True
    """simple_switch_grpc (P4Runtime server); False: simple_switch (Thrift only),
    as `p4scope-switch` or `-- --no-grpc`."""
    max_port_count: int = 512
    dump_packet_data: int = 0
    # target options
    grpc_server_addr: str = DEFAULT_GRPC_ADDR
    grpc_server_ssl: bool = False
    grpc_server_cacert: Optional[str] = None
    grpc_server_cert: Optional[str] = None
    grpc_server_key: Optional[str] = None
    grpc_server_with_client_auth: bool = False
    cpu_port: Optional[int] = None
    """None: no packet I/O (BMv2 refuses an explicit 0)."""
    drop_port: int = 511
    priority_queues: int = 1
    max_mc_groups: int = 65536
    max_l1_entries: int = 4096
    max_l2_entries: int = 8192
    enable_swap: bool = False
    """simple_switch's --enable-swap (accepted; p4scope always allows a swap)."""
    # p4scope target options
    tm_config: Optional[dict] = None
    tm_config_path: Optional[str] = None
    ready_file: Optional[str] = None
    seed: int = 0
    metrics_port: Optional[int] = None
    """p4scope: serve the traffic manager's queue statistics for Prometheus (0: a free port)."""
    metrics_address: str = "127.0.0.1"
    warnings: list[str] = field(default_factory=list)
    grpc_options: list[str] = field(default_factory=list)
    """simple_switch_grpc-only target options given (refused with --no-grpc)."""
    action: Optional[str] = None
    """"help", "version" or "json-version" when the command line asks for it."""


# name -> (kind, attribute); kinds: flag, int, uint, str, path, level, ignored-str, ignored-flag
_GENERAL = {
    "--help": ("action", "help"), "-h": ("action", "help"),
    "--version": ("action", "version"), "-v": ("action", "version"),
    "--json-version": ("action", "json-version"),
    "--interface": ("iface", "interfaces"), "-i": ("iface", "interfaces"),
    "--pcap": ("pcap", "pcap_dir"),
    "--use-files": ("int", "use_files"),
    "--packet-in": ("warn-str", "a nanomsg packet socket is not supported; --packet-in ignored"),
    "--thrift-port": ("port", "thrift_port"),
    "--device-id": ("u64", "device_id"),
    "--nanolog": ("warn-str", "the nanomsg event logger is not supported; --nanolog ignored"),
    "--log-console": ("flag", "log_console"),
    "--log-file": ("str", "log_file"),
    "--log-level": ("level", "log_level"), "-L": ("level", "log_level"),
    "--log-flush": ("flag", "log_flush"),
    "--log-file-max-size": ("pos", "log_file_max_size"),
    "--log-file-max-files": ("uint", "log_file_max_files"),
    "--notifications-addr": ("warn-str", "nanomsg notifications are not supported; "
                                         "--notifications-addr ignored"),
    "--debugger": ("warn-flag", "the BMv2 debugger is not supported; --debugger ignored"),
    "--debugger-addr": ("warn-str", "the BMv2 debugger is not supported; --debugger-addr ignored"),
    "--restore-state": ("warn-str", "--restore-state is not supported; ignored"),
    "--dump-packet-data": ("uint", "dump_packet_data"),
    "--no-p4": ("flag", "no_p4"),
    "--max-port-count": ("int", "max_port_count"),
}

_TARGET = {
    "--grpc-server-addr": ("addr", "grpc_server_addr"),
    "--grpc-server-ssl": ("flag", "grpc_server_ssl"),
    "--grpc-server-cacert": ("file", "grpc_server_cacert"),
    "--grpc-server-cert": ("file", "grpc_server_cert"),
    "--grpc-server-key": ("file", "grpc_server_key"),
    "--grpc-server-with-client-auth": ("flag", "grpc_server_with_client_auth"),
    "--cpu-port": ("uint", "cpu_port"),
    "--drop-port": ("uint", "drop_port"),
    "--priority-queues": ("uint", "priority_queues"),
    "--max-mc-groups": ("pos", "max_mc_groups"),
    "--max-l1-entries": ("pos", "max_l1_entries"),
    "--max-l2-entries": ("pos", "max_l2_entries"),
    "--disable-swap": ("warn-flag", ""),
    "--dp-grpc-server-addr": ("warn-str", "the dataplane gRPC channel is not supported; "
                                          "--dp-grpc-server-addr ignored"),
    "--load-modules": ("warn-str", "dynamic modules are not supported; --load-modules ignored"),
    "--help": ("action", "help"), "-h": ("action", "help"),
    # p4scope's own
    "--tm-config": ("tm", "tm_config_path"),
    "--ready-file": ("str", "ready_file"),
    "--thrift-ip": ("str", "thrift_ip"),
    "--no-thrift": ("flag", "no_thrift"),
    "--no-grpc": ("no-grpc", "grpc"),
    "--seed": ("u64", "seed"),
    "--metrics-port": ("port", "metrics_port"),
    "--metrics-address": ("str", "metrics_address"),
}

# simple_switch's target options (targets/simple_switch/main.cpp) and p4scope's own
_SIMPLE_TARGET = {
    "--enable-swap": ("flag", "enable_swap"),
    **{k: _TARGET[k] for k in ("--drop-port", "--priority-queues", "--max-mc-groups",
                               "--max-l1-entries", "--max-l2-entries", "--load-modules",
                               "--help", "-h", "--tm-config", "--ready-file", "--thrift-ip",
                               "--no-thrift", "--seed", "--metrics-port",
                               "--metrics-address")},
}
_GRPC_ONLY = sorted(k for k in _TARGET if k not in _SIMPLE_TARGET and k != "--no-grpc")

_VALUE_KINDS = {"iface", "int", "uint", "u64", "pos", "port", "str", "file", "level", "addr",
                "warn-str", "tm"}


def _int(opt: str, text: str, lo: int, hi: int, what: str = "an integer") -> int:
    try:
        v = int(text, 10)
    except ValueError:
        raise UsageError(f"{opt}: '{text}' is not {what}") from None
    if not lo <= v <= hi:
        raise UsageError(f"{opt}: {v} is out of range ({lo}..{hi})")
    return v


def is_loopback(host: str) -> bool:
    """Whether `host` (an address, "[v6]" or "localhost") is this machine only."""
    host = host.strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_address(opt: str, addr: str) -> str:
    host, sep, port = addr.rpartition(":")
    if not sep or not host:
        raise UsageError(f"{opt}: '{addr}' is not HOST:PORT")
    _int(opt, port, 0, 65535, "a port number")
    return addr


def _value(o: SwitchOptions, opt: str, kind: str, attr: str, val: str) -> None:
    if kind == "iface":
        port, at, name = val.partition("@")
        if not at or not name:
            raise UsageError(f"{opt}: '{val}' is not PORT@INTERFACE")
        p = _int(opt, port, 0, INT_MAX, "a port number")
        if any(p == q for q, _ in o.interfaces):
            raise UsageError(f"{opt}: port {p} is given twice")
        o.interfaces.append((p, name))
    elif kind == "int":
        setattr(o, attr, _int(opt, val, -INT_MAX - 1, INT_MAX))
    elif kind == "uint":
        setattr(o, attr, _int(opt, val, 0, 2**32 - 1, "a non-negative integer"))
    elif kind == "u64":
        setattr(o, attr, _int(opt, val, 0, 2**64 - 1, "a non-negative integer"))
    elif kind == "pos":
        setattr(o, attr, _int(opt, val, 1, INT_MAX, "a positive integer"))
    elif kind == "port":
        setattr(o, attr, _int(opt, val, 0, 65535, "a port number"))
    elif kind == "level":
        if val not in LOG_LEVELS:
            raise UsageError(f"{opt}: '{val}' is not a log level ({', '.join(LOG_LEVELS)})")
        o.log_level = val
    elif kind == "addr":
        o.grpc_server_addr = check_address(opt, val)
    elif kind == "file":
        if not os.path.isfile(val):
            raise UsageError(f"{opt}: no file '{val}'")
        setattr(o, attr, val)
    elif kind == "tm":
        try:
            with open(val, encoding="utf-8") as f:
                cfg = json.load(f)
        except OSError as e:
            raise UsageError(f"{opt}: cannot read '{val}': {e.strerror}") from None
        except ValueError as e:
            raise UsageError(f"{opt}: '{val}' is not JSON: {e}") from None
        if not isinstance(cfg, dict):
            raise UsageError(f"{opt}: '{val}' must hold a JSON object")
        _check_tm_config(opt, val, cfg)
        o.tm_config, o.tm_config_path = cfg, val
    elif kind == "warn-str":
        o.warnings.append(attr)
    else:  # str
        setattr(o, attr, val)


def _check_tm_config(opt: str, path: str, cfg: dict) -> None:
    """Refuse a traffic-manager configuration the engine would refuse, so a
    bad file is a command-line error (status 2), not a failure later."""
    try:
        import p4scope_dataplane as dp
    except ImportError:  # engine not built: the daemon cannot start anyway
        return
    try:
        dp.tm_config_check(cfg)
    except Exception as e:  # the engine's error names the offending key path
        raise UsageError(f"{opt}: '{path}': {e}") from None


def _parse_section(o: SwitchOptions, args: list[str], table: dict, section: str,
                   positionals: list[str]) -> None:
    i = 0
    while i < len(args):
        tok = args[i]
        i += 1
        if not tok.startswith("-") or tok == "-":
            positionals.append(tok)
            continue
        name, eq, inline = tok.partition("=") if tok.startswith("--") else (tok, "", "")
        if not eq and len(tok) > 2 and tok[0] == "-" and tok[1] != "-":
            name, inline, eq = tok[:2], tok[2:], "="  # -i1@veth0, -Ldebug
        spec = table.get(name)
        if spec is None:
            hint = ""
            if name in _GRPC_ONLY and not o.grpc:
                hint = (" (simple_switch has no gRPC server: it is a simple_switch_grpc "
                        "option, for p4scope switch or p4scope-switch-grpc)")
            elif name in _GENERAL and table is not _GENERAL:
                hint = " (it is a general option: put it before '--')"
            elif name in _TARGET and table is _GENERAL:
                hint = " (it is a target option: put it after '--')"
            raise UsageError(f"unrecognised {section} option '{name}'{hint}")
        if name in _GRPC_ONLY:
            o.grpc_options.append(name)
        kind, attr = spec
        if kind == "action":
            if eq:
                raise UsageError(f"{name} takes no value")
            o.action = o.action or attr
        elif kind in ("flag", "warn-flag", "no-grpc"):
            if eq:
                raise UsageError(f"{name} takes no value")
            if kind == "no-grpc":
                o.grpc = False
            elif kind == "flag":
                setattr(o, attr, True)
            elif attr:
                o.warnings.append(attr)
        elif kind == "pcap":
            if eq:
                val = inline
            elif i < len(args) and not args[i].startswith("-") and not args[i].endswith(".json"):
                val = args[i]
                i += 1
            else:
                val = "."
            if not os.path.isdir(val):
                raise UsageError(f"{name}: directory '{val}' does not exist")
            o.pcap_dir = val
        else:
            if eq:
                val = inline
            else:
                if i >= len(args):
                    raise UsageError(f"{name} needs a value")
                val = args[i]
                i += 1
            _value(o, name, kind, attr, val)


def parse_args(argv: list[str], strict_separator: bool = True,
               grpc: bool = True) -> SwitchOptions:
    """Parses a simple_switch_grpc command line, or simple_switch's with
    `grpc` False (without the program name).

    With `strict_separator` False (the `p4scope switch` subcommand, whose
    framework swallows `--`), target options are also taken before `--`."""
    o = SwitchOptions(grpc=grpc)
    targets = _TARGET if grpc else _SIMPLE_TARGET
    if "--" in argv:
        cut = argv.index("--")
        general, target = argv[:cut], argv[cut + 1:]
    else:
        general, target = argv, []
    if not strict_separator:
        merged = dict(_GENERAL)
        merged.update({k: v for k, v in targets.items() if k not in merged})
        table = merged
    else:
        table = _GENERAL
    positionals: list[str] = []
    _parse_section(o, general, table, "general", positionals)
    target_pos: list[str] = []
    # BMv2 quirk: with --no-p4, the first word after `--` may be taken for the
    # JSON; an option there is simply a target option.
    _parse_section(o, target, targets if strict_separator else table, "target", target_pos)
    if o.action:
        return o
    if target_pos:
        if not positionals and not o.no_p4 and target_pos[0].endswith(".json"):
            positionals.append(target_pos.pop(0))
        if target_pos:
            raise UsageError(f"unexpected argument '{target_pos[0]}' among target options")
    if len(positionals) > 1:
        raise UsageError(f"only one JSON file may be given (got {', '.join(positionals)})")
    if positionals:
        if o.no_p4:
            o.warnings.append("ignoring input config as '--no-p4' was used")
        else:
            o.json_path = positionals[0]
    elif not o.no_p4:
        raise UsageError("please give a BMv2 JSON file, or --no-p4 to start without a program")
    _check(o)
    return o


def _check(o: SwitchOptions) -> None:
    if o.log_console and o.log_file:
        raise UsageError("--log-console and --log-file are exclusive")
    if o.log_flush and not o.log_file:
        o.warnings.append("ignoring --log-flush because --log-file is not given")
        o.log_flush = False
    if o.max_port_count < 0:
        raise UsageError("--max-port-count: cannot be negative")
    if len(o.interfaces) > o.max_port_count:
        raise UsageError(f"{len(o.interfaces)} interfaces exceed --max-port-count "
                         f"{o.max_port_count}")
    if o.use_files is not None and o.use_files < 0:
        o.use_files = 0
    if o.json_path is not None and not os.path.isfile(o.json_path):
        raise UsageError(f"no JSON file '{o.json_path}'")
    if o.cpu_port is not None:
        if o.cpu_port == 0:
            raise UsageError("--cpu-port: 0 is not a valid CPU port")
        if any(p == o.cpu_port for p, _ in o.interfaces):
            raise UsageError(f"--cpu-port: port {o.cpu_port} is also an interface (-i)")
        if o.cpu_port == o.drop_port:
            raise UsageError(f"--cpu-port: port {o.cpu_port} is the drop port")
    if o.metrics_address != "127.0.0.1":
        try:
            ipaddress.ip_address(o.metrics_address)
        except ValueError:
            raise UsageError(f"--metrics-address: '{o.metrics_address}' is not an IP "
                             "address") from None
        if o.metrics_port is None:
            raise UsageError("--metrics-address: only with --metrics-port")
    if not 1 <= o.priority_queues <= 8:
        raise UsageError(f"--priority-queues: {o.priority_queues} is out of range (1..8, "
                         "v1model's priority is 3 bits)")
    if not o.grpc and o.grpc_options:
        raise UsageError(f"{o.grpc_options[0]}: there is no gRPC server with --no-grpc")
    if o.grpc_server_ssl:
        if not o.grpc_server_cert:
            raise UsageError("--grpc-server-ssl needs --grpc-server-cert")
        if not o.grpc_server_key:
            raise UsageError("--grpc-server-ssl needs --grpc-server-key")
        _check_pem("--grpc-server-cert", o.grpc_server_cert, "CERTIFICATE")
        _check_pem("--grpc-server-key", o.grpc_server_key, "PRIVATE KEY")
        if o.grpc_server_cacert:
            _check_pem("--grpc-server-cacert", o.grpc_server_cacert, "CERTIFICATE")
    else:
        if o.grpc_server_cacert or o.grpc_server_cert or o.grpc_server_key:
            o.warnings.append("SSL/TLS is disabled for the gRPC server (no --grpc-server-ssl), "
                              "so the .pem files given are ignored")
        if o.grpc_server_with_client_auth:
            o.warnings.append("SSL/TLS is disabled for the gRPC server, so client "
                              "authentication cannot be requested")
            o.grpc_server_with_client_auth = False
    if o.grpc_server_with_client_auth and not o.grpc_server_cacert:
        raise UsageError("--grpc-server-with-client-auth needs --grpc-server-cacert (the CA "
                         "that client certificates are checked against)")
    _warn_plaintext(o)


def _check_pem(opt: str, path: str, what: str) -> None:
    """A PEM file holding `what`, so a wrong file is named here rather than
    turning into gRPC's "Failed to bind" at start-up."""
    try:
        with open(path, encoding="ascii", errors="replace") as f:
            text = f.read(1 << 20)
    except OSError as e:
        raise UsageError(f"{opt}: cannot read '{path}': {e.strerror}") from None
    if f"-----BEGIN {what}-----" not in text and not (
            what == "PRIVATE KEY" and "PRIVATE KEY-----" in text):
        raise UsageError(f"{opt}: '{path}' holds no PEM {what.lower()} "
                         f"('-----BEGIN {what}-----')")


def _warn_plaintext(o: SwitchOptions) -> None:
    """Servers other hosts can reach, without TLS, are said out loud."""
    host = o.grpc_server_addr.rpartition(":")[0]
    if o.grpc and not o.grpc_server_ssl and not is_loopback(host):
        o.warnings.append(
            f"the P4Runtime server on {o.grpc_server_addr} is reachable from other hosts in "
            "plaintext: anyone who reaches it can control the switch; encrypt it with "
            "'-- --grpc-server-ssl --grpc-server-cert FILE --grpc-server-key FILE' (and "
            "--grpc-server-cacert FILE --grpc-server-with-client-auth to admit only clients "
            "with a certificate), or listen on 127.0.0.1")
    if not o.no_thrift and not is_loopback(o.thrift_ip):
        o.warnings.append(
            f"the Thrift run-time API on {o.thrift_ip}:{o.thrift_port} is reachable from other "
            "hosts in plaintext and without authentication (Thrift has no TLS here): anyone "
            "who reaches it can control the switch; keep it on loopback (-- --thrift-ip "
            "127.0.0.1) or run without it (-- --no-thrift)")


_GENERAL_HELP = """\
  -h, --help                 this message
  -i, --interface PORT@IF    attach Linux interface IF as port PORT (repeatable)
  --pcap [DIR]               write <port>_in.pcap / <port>_out.pcap in DIR (default .)
  --use-files WAIT_S         instead of interfaces, read IF_in.pcap (files or FIFOs, all
                             together, earliest timestamp first) after WAIT_S seconds
                             and write IF_out.pcap
  --thrift-port N            BMv2's run-time API (simple_switch_CLI, p4scope switch-cli)
                             on 127.0.0.1:N (default 9090; 0: any free port; in use:
                             exit 1 as BMv2, unless -- --no-thrift)
  --device-id N              P4Runtime device id (default 0)
  --log-console              log (and trace packets) on stdout
  --log-file FILE            log to FILE
  -L, --log-level LEVEL      trace, debug, info, warn, error, off (default trace)
  --log-flush                flush the log file after every message
  --log-file-max-size N      accepted (rotation size in bytes)
  --log-file-max-files N     accepted (rotated files kept)
  --dump-packet-data N       log the first N bytes of each packet received and sent
  --no-p4                    start without a program (SetForwardingPipelineConfig sets one)
  --max-port-count N         maximum number of interfaces (default 512)
  -v, --version              print the version
  --json-version             print the highest BMv2 JSON version supported
  --nanolog, --packet-in, --notifications-addr, --debugger, --debugger-addr,
  --restore-state            accepted and ignored (with a warning)

"""

_EXIT_HELP = """\
Exit status: 0 after a clean stop (SIGINT/SIGTERM), 2 for a command-line
error, 1 if the switch cannot start.
"""

HELP = f"""\
Usage: p4scope switch [options] <path to JSON config file> [-- target options]
       p4scope-switch-grpc ...   (the same command line)

A drop-in for BMv2's simple_switch_grpc: the same options, the same
P4Runtime. The gRPC server listens on {DEFAULT_GRPC_ADDR} (loopback only)
unless --grpc-server-addr says otherwise; BMv2's default is 0.0.0.0:9559.
p4scope-switch is simple_switch: Thrift only.

General options:
{_GENERAL_HELP}Target options (after --):
  --grpc-server-addr H:P     gRPC address (default {DEFAULT_GRPC_ADDR}, loopback)
  --grpc-server-ssl          serve TLS; needs --grpc-server-cert and --grpc-server-key
                             (without it, a non-loopback address gets a warning)
  --grpc-server-cacert FILE  CA certificate to verify clients against
  --grpc-server-cert FILE    server certificate (PEM)
  --grpc-server-key FILE     server key (PEM)
  --grpc-server-with-client-auth
                             require a valid client certificate
  --cpu-port N               CPU port for packet-in/packet-out (nonzero, not an -i port)
  --drop-port N              drop port (default 511)
  --priority-queues N        priority queues per port, 1..8 (default 1)
  --max-mc-groups N, --max-l1-entries N, --max-l2-entries N
                             accepted (PRE sizes)
  --disable-swap, --dp-grpc-server-addr, --load-modules
                             accepted and ignored
p4scope target options:
  --tm-config FILE           traffic manager configuration (JSON object): line rates
                             in bit/s, queue limits, a shared buffer with dynamic
                             thresholds, schedulers, fair/unfair arbitration, ECN
                             (see dataplane/README.md)
  --ready-file FILE          write FILE (the gRPC address) once the server accepts
  --thrift-ip IP             address of the run-time server (default 127.0.0.1; BMv2
                             listens on all interfaces: give 0.0.0.0 to do the same,
                             plaintext and unauthenticated: a warning says so)
  --no-thrift                serve no Thrift API (as simple_switch_grpc built without
                             Thrift); otherwise a --thrift-port in use is an error
  --no-grpc                  serve no P4Runtime (as simple_switch: Thrift only;
                             the gRPC-only options above are then refused)
  --seed N                   seed of the engine's random numbers (default 0)
  --metrics-port N           serve the traffic manager's queue statistics for
                             Prometheus on http://ADDRESS:N/metrics (0: a free port)
  --metrics-address IP       address of that endpoint (default 127.0.0.1)

{_EXIT_HELP}"""

SIMPLE_HELP = f"""\
Usage: p4scope-switch [options] <path to JSON config file> [-- target options]

A drop-in for BMv2's simple_switch: the same options, BMv2's run-time
Thrift API and no gRPC server (p4scope switch and p4scope-switch-grpc are
simple_switch_grpc, with P4Runtime).

General options:
{_GENERAL_HELP}Target options (after --):
  --enable-swap              accepted (a swap of JSONs over Thrift is always allowed)
  --drop-port N              drop port (default 511)
  --priority-queues N        priority queues per port, 1..8 (default 1)
  --max-mc-groups N, --max-l1-entries N, --max-l2-entries N
                             accepted (PRE sizes)
  --load-modules             accepted and ignored
p4scope target options:
  --tm-config FILE           traffic manager configuration (JSON object): line rates
                             in bit/s, queue limits, a shared buffer with dynamic
                             thresholds, schedulers, fair/unfair arbitration, ECN
                             (see dataplane/README.md)
  --ready-file FILE          write FILE (the Thrift address) once the server accepts
  --thrift-ip IP             address of the run-time server (default 127.0.0.1; BMv2
                             listens on all interfaces: give 0.0.0.0 to do the same,
                             plaintext and unauthenticated: a warning says so)
  --no-thrift                serve no Thrift API (as BMv2 built without Thrift);
                             otherwise a --thrift-port in use is an error
  --seed N                   seed of the engine's random numbers (default 0)
  --metrics-port N           serve the traffic manager's queue statistics for
                             Prometheus on http://ADDRESS:N/metrics (0: a free port)
  --metrics-address IP       address of that endpoint (default 127.0.0.1)

{_EXIT_HELP}"""
