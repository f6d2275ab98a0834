"""Topologies as data: a small JSON format, read into checked dataclasses.

A topology file (see topologies/README.md for the full reference)::

    {
      "name": "incast-3",
      "defaults": {"switch": {"kind": "p4scope", "program": "build/dut.json"},
                   "link": {"bw": "100M"}},
      "hosts": [{"name": "h1"}, {"name": "h2", "ip": "10.0.0.2/24"}],
      "switches": [{"name": "s1", "cpu_port": 255}],
      "links": [{"a": "h1", "b": "s1:1"}, {"a": "h2", "b": "s1:2", "bw": "1G"}]
    }

Every error names the field it is about, as a path into the document
(``links[1].bw: ...``), and says what would be accepted. Nothing is
silently ignored: unknown keys are errors, and so are link delay, jitter
and loss, which need netem, absent from this kernel.

Derived values are filled in here, once, so every user of a Topology sees
the same ones: host addresses (10.0.0.0/16 + N and 02:00:00:00:HH:LL for
the N-th host, from 1), switch port numbers (the next free number from 1), device ids
(switch order from 0), host interface names (<host>-eth<i>) and switch
interface names (<switch>-eth<port>).
"""

from __future__ import annotations

import ipaddress
import json
import re
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Optional

SWITCH_KINDS = ("p4scope", "bmv2", "bridge")
LOG_LEVELS = ("off", "trace", "debug", "info", "warn", "error")
BOND_HASHES = ("l2", "l3", "l34", "ipdst", "random")
IFNAMSIZ = 15  # longest Linux interface name
MAX_PORT = 510  # 9-bit ports; 511 is simple_switch's drop port
NETEM_KEYS = ("delay", "jitter", "loss")


class TopologyError(ValueError):
    """A topology document is invalid; the message starts with the field's path."""


@dataclass(frozen=True)
class HostSpec:
    name: str
    ip: str
    """Address with prefix length, e.g. 10.0.0.1/24."""
    mac: str
    gw: Optional[str] = None
    """Default gateway address (a route via the host's interface)."""
    gw_mac: Optional[str] = None
    """Static ARP entry for the gateway (P4 routers rarely answer ARP)."""
    arp: dict[str, str] = field(default_factory=dict)
    """Static ARP entries ip -> mac."""
    bond: Optional[str] = None
    """Hash policy when the host's links form one bond (lag.py)."""
    mtu: Optional[int] = None


@dataclass(frozen=True)
class SwitchSpec:
    name: str
    kind: str = "p4scope"
    program: Optional[str] = None
    """BMv2 JSON given on the command line; None: --no-p4 (pushed over P4Runtime)."""
    p4info: Optional[str] = None
    """For the controller; the switch does not read it."""
    device_id: int = 0
    grpc_port: Optional[int] = None
    """None: the first free port from 50051."""
    thrift_port: Optional[int] = None
    """None: the first free port from 9090."""
    cpu_port: Optional[int] = None
    log: str = "info"
    pcap: bool = False
    priority_queues: Optional[int] = None
    extra_args: tuple[str, ...] = ()
    """More general options, before `--`."""
    target_args: tuple[str, ...] = ()
    """More target options, after `--` (e.g. p4scope's --tm-config)."""


@dataclass(frozen=True)
class Endpoint:
    node: str
    port: int
    """Switch: the P4 port number. Host: the interface index (eth<i>)."""


@dataclass(frozen=True)
class LinkSpec:
    a: Endpoint
    b: Endpoint
    bw: Optional[int] = None
    """Rate in bit/s, shaped with htb at both ends; None: unshaped."""
    queue: Optional[int] = None
    """Packets the shaped queue holds (a pfifo under the htb class)."""
    mtu: Optional[int] = None


@dataclass(frozen=True)
class Topology:
    name: str
    hosts: tuple[HostSpec, ...]
    switches: tuple[SwitchSpec, ...]
    links: tuple[LinkSpec, ...]
    control: dict[str, Any] = field(default_factory=dict)
    """Free-form settings for the controller (routes, groups, ...), kept as given."""

    def node(self, name: str) -> HostSpec | SwitchSpec:
        nodes: tuple[HostSpec | SwitchSpec, ...] = (*self.hosts, *self.switches)
        for n in nodes:
            if n.name == name:
                return n
        raise KeyError(name)

    def is_switch(self, name: str) -> bool:
        return any(s.name == name for s in self.switches)

    def links_of(self, name: str) -> list[LinkSpec]:
        return [l for l in self.links if name in (l.a.node, l.b.node)]

    def peer(self, ep: Endpoint) -> Endpoint:
        """The other end of the link `ep` is on."""
        for l in self.links:
            if l.a == ep:
                return l.b
            if l.b == ep:
                return l.a
        raise KeyError(ep)

    def ports(self, switch: str) -> dict[int, Endpoint]:
        """A switch's ports and what each connects to (for controllers:
        where hosts hang, which ports face other switches)."""
        out = {}
        for l in self.links:
            for me, other in ((l.a, l.b), (l.b, l.a)):
                if me.node == switch:
                    out[me.port] = other
        return dict(sorted(out.items()))

    def attachments(self, host: str) -> list[Endpoint]:
        """The switch ports a host is attached to, in link order."""
        return [l.b if l.a.node == host else l.a for l in self.links_of(host)]

    def has_switch_loop(self, kinds: tuple[str, ...] = SWITCH_KINDS) -> bool:
        """Whether links between switches of `kinds` close a loop (two
        parallel links count), e.g. any leaf-spine with two spines."""
        parent = {s.name: s.name for s in self.switches if s.kind in kinds}

        def root(n: str) -> str:
            while parent[n] != n:
                parent[n] = parent[parent[n]]
                n = parent[n]
            return n

        for l in self.links:
            if l.a.node in parent and l.b.node in parent:
                ra, rb = root(l.a.node), root(l.b.node)
                if ra == rb:
                    return True
                parent[ra] = rb
        return False

    def ifname(self, ep: Endpoint) -> str:
        """The Linux interface name of one end of a link."""
        return f"{ep.node}-eth{ep.port}"

    def to_dict(self) -> dict[str, Any]:
        """The document form; from_dict(t.to_dict()) == t."""
        def ep(e: Endpoint) -> str:
            return f"{e.node}:{e.port}" if self.is_switch(e.node) else e.node

        def clean(d: dict[str, Any]) -> dict[str, Any]:
            return {k: (list(v) if isinstance(v, tuple) else v) for k, v in d.items()
                    if v is not None and v != () and v != {}}

        return {
            "name": self.name,
            "hosts": [clean(asdict(h)) for h in self.hosts],
            "switches": [clean(asdict(s)) for s in self.switches],
            "links": [clean({"a": ep(l.a), "b": ep(l.b), "bw": None if l.bw is None else format_rate(l.bw),
                             "queue": l.queue, "mtu": l.mtu})
                      for l in self.links],
            **({"control": self.control} if self.control else {}),
        }

    def dumps(self) -> str:
        return json.dumps(self.to_dict(), indent=2) + "\n"


# ---------------------------------------------------------------- readers

_NAME = re.compile(r"^[a-z][a-z0-9]*$")
_MAC = re.compile(r"^[0-9a-f]{2}(:[0-9a-f]{2}){5}$")
_RATE = re.compile(r"^([0-9]+(?:\.[0-9]+)?)\s*([kKmMgG]?)(?:bit|b|bps)?$")


def _fail(path: str, msg: str) -> TopologyError:
    return TopologyError(f"{path}: {msg}")


def _keys(d: Any, path: str, allowed: tuple[str, ...]) -> dict[str, Any]:
    if not isinstance(d, dict):
        raise _fail(path, f"must be an object, not {type(d).__name__}")
    for k in d:
        if k in NETEM_KEYS and "bw" in allowed:
            raise _fail(f"{path}.{k}", "link delay, jitter and loss need netem, which this kernel "
                        "does not have; p4scope refuses them rather than ignore them "
                        "(rates work: bw)")
        if k not in allowed:
            raise _fail(f"{path}.{k}", f"unknown key (known: {', '.join(allowed)})")
    return d


def _int(v: Any, path: str, lo: int, hi: int) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        raise _fail(path, f"must be an integer, not {v!r}")
    if not lo <= v <= hi:
        raise _fail(path, f"{v} is outside {lo}..{hi}")
    return v


def _opt_int(d: dict, key: str, path: str, lo: int, hi: int) -> Optional[int]:
    return None if d.get(key) is None else _int(d[key], f"{path}.{key}", lo, hi)


def _str(v: Any, path: str) -> str:
    if not isinstance(v, str) or not v:
        raise _fail(path, f"must be a non-empty string, not {v!r}")
    return v


def _name(v: Any, path: str) -> str:
    s = _str(v, path)
    if not _NAME.match(s):
        raise _fail(path, f"'{s}' must be lower-case letters and digits, starting with a letter")
    return s


def _mac(v: Any, path: str) -> str:
    s = _str(v, path).lower()
    if not _MAC.match(s):
        raise _fail(path, f"'{s}' is not a MAC address (aa:bb:cc:dd:ee:ff)")
    return s


def _ipv4(v: Any, path: str) -> str:
    s = _str(v, path)
    try:
        return str(ipaddress.IPv4Address(s))
    except ValueError:
        raise _fail(path, f"'{s}' is not an IPv4 address") from None


def parse_rate(v: Any, path: str) -> int:
    """A rate in bit/s: a number (Mbit/s, as Mininet's bw=) or a string
    such as "100M", "1.5G", "800k", "100Mbit", "10Gbps"."""
    if isinstance(v, bool):
        raise _fail(path, f"{v!r} is not a rate")
    if isinstance(v, (int, float)):
        bps = float(v) * 1e6
    elif isinstance(v, str) and (m := _RATE.match(v.strip())):
        bps = float(m.group(1)) * {"": 1, "k": 1e3, "m": 1e6, "g": 1e9}[m.group(2).lower()]
    else:
        raise _fail(path, f"{v!r} is not a rate (a number of Mbit/s, or e.g. \"100M\", \"1G\", \"500k\")")
    if not 1000 <= bps <= 400e9:
        raise _fail(path, f"{v!r} is outside 1 kbit/s .. 400 Gbit/s")
    return int(bps)


def format_rate(bps: int) -> str:
    """The shortest exact string parse_rate reads back: 100000000 -> "100M"."""
    for unit, mult in (("G", 10**9), ("M", 10**6), ("k", 10**3)):
        if bps % mult == 0:
            return f"{bps // mult}{unit}"
    return f"{bps}bit"


def _merge(defaults: dict, item: Any, path: str) -> Any:
    return {**defaults, **item} if isinstance(item, dict) else item


def _endpoint(v: Any, path: str) -> tuple[str, Optional[int]]:
    s = _str(v, path)
    node, sep, port = s.partition(":")
    _name(node, path)
    if not sep:
        return node, None
    if not port.isdigit():
        raise _fail(path, f"'{s}' must be NODE or NODE:PORT")
    return node, int(port)


_TOP_KEYS = ("name", "defaults", "hosts", "switches", "links", "control")
_HOST_KEYS = ("name", "ip", "mac", "gw", "gw_mac", "arp", "bond", "mtu")
_SWITCH_KEYS = ("name", "kind", "program", "p4info", "device_id", "grpc_port", "thrift_port",
                "cpu_port", "log", "pcap", "priority_queues", "extra_args", "target_args")
_LINK_KEYS = ("a", "b", "bw", "queue", "mtu")


def _host(d: Any, i: int, path: str) -> HostSpec:
    d = _keys(d, path, _HOST_KEYS)
    name = _name(d.get("name"), f"{path}.name")
    ip = d.get("ip", f"{ipaddress.IPv4Address('10.0.0.0') + i + 1}/16")
    try:
        iface = ipaddress.IPv4Interface(_str(ip, f"{path}.ip"))
    except ValueError:
        raise _fail(f"{path}.ip", f"'{ip}' is not an IPv4 address with prefix (10.0.0.1/24)") from None
    if "/" not in ip:
        raise _fail(f"{path}.ip", f"'{ip}' needs a prefix length (e.g. {ip}/24)")
    mac = _mac(d.get("mac", f"02:00:00:00:{(i + 1) >> 8:02x}:{(i + 1) & 0xff:02x}"), f"{path}.mac")
    arp = d.get("arp", {})
    if not isinstance(arp, dict):
        raise _fail(f"{path}.arp", "must be an object {ip: mac}")
    arp = {_ipv4(k, f"{path}.arp"): _mac(v, f"{path}.arp.{k}") for k, v in arp.items()}
    bond = d.get("bond")
    if bond is not None and bond not in BOND_HASHES:
        raise _fail(f"{path}.bond", f"{bond!r} is not one of {', '.join(BOND_HASHES)}")
    return HostSpec(
        name=name, ip=str(iface), mac=mac,
        gw=None if d.get("gw") is None else _ipv4(d["gw"], f"{path}.gw"),
        gw_mac=None if d.get("gw_mac") is None else _mac(d["gw_mac"], f"{path}.gw_mac"),
        arp=arp, bond=bond, mtu=_opt_int(d, "mtu", path, 68, 65535))


def _args(d: dict, key: str, path: str) -> tuple[str, ...]:
    v = d.get(key, [])
    if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
        raise _fail(f"{path}.{key}", "must be a list of strings")
    return tuple(v)


def _switch(d: Any, i: int, path: str) -> SwitchSpec:
    d = _keys(d, path, _SWITCH_KEYS)
    kind = d.get("kind", "p4scope")
    if kind not in SWITCH_KINDS:
        raise _fail(f"{path}.kind", f"{kind!r} is not one of {', '.join(SWITCH_KINDS)}")
    log = d.get("log", "info")
    if log not in LOG_LEVELS:
        raise _fail(f"{path}.log", f"{log!r} is not one of {', '.join(LOG_LEVELS)}")
    pcap = d.get("pcap", False)
    if not isinstance(pcap, bool):
        raise _fail(f"{path}.pcap", "must be true or false")
    prog = d.get("program")
    return SwitchSpec(
        name=_name(d.get("name"), f"{path}.name"), kind=kind,
        program=None if prog is None else _str(prog, f"{path}.program"),
        p4info=None if d.get("p4info") is None else _str(d["p4info"], f"{path}.p4info"),
        device_id=_int(d.get("device_id", i), f"{path}.device_id", 0, 2**63 - 1),
        grpc_port=_opt_int(d, "grpc_port", path, 1, 65535),
        thrift_port=_opt_int(d, "thrift_port", path, 1, 65535),
        cpu_port=_opt_int(d, "cpu_port", path, 1, MAX_PORT),
        log=log, pcap=pcap,
        priority_queues=_opt_int(d, "priority_queues", path, 1, 8),
        extra_args=_args(d, "extra_args", path), target_args=_args(d, "target_args", path))


def from_dict(doc: Any, source: str = "topology") -> Topology:
    """Checks a topology document and fills in the derived values."""
    doc = _keys(doc, source, _TOP_KEYS)
    defaults = _keys(doc.get("defaults", {}), "defaults", ("host", "switch", "link"))
    dh = _keys(defaults.get("host", {}), "defaults.host", _HOST_KEYS)
    ds = _keys(defaults.get("switch", {}), "defaults.switch", _SWITCH_KEYS)
    dl = _keys(defaults.get("link", {}), "defaults.link", _LINK_KEYS)
    name = _str(doc.get("name", "topology"), "name")
    for key in ("hosts", "switches", "links"):
        if not isinstance(doc.get(key, []), list):
            raise _fail(key, "must be a list")
    hosts = [_host(_merge(dh, h, f"hosts[{i}]"), i, f"hosts[{i}]") for i, h in enumerate(doc.get("hosts", []))]
    switches = [_switch(_merge(ds, s, f"switches[{i}]"), i, f"switches[{i}]")
                for i, s in enumerate(doc.get("switches", []))]
    control = doc.get("control", {})
    if not isinstance(control, dict):
        raise _fail("control", "must be an object")
    _check_unique(hosts, switches)
    links = _links(doc.get("links", []), dl, hosts, switches)
    topo = Topology(name=name, hosts=tuple(hosts), switches=tuple(switches), links=tuple(links),
                    control=control)
    _check_hosts(topo)
    return topo


def _check_unique(hosts: list[HostSpec], switches: list[SwitchSpec]) -> None:
    seen: dict[str, str] = {}
    names = [("hosts", i, h.name) for i, h in enumerate(hosts)] + \
        [("switches", i, s.name) for i, s in enumerate(switches)]
    for kind, i, name in names:
        if name in seen:
            raise _fail(f"{kind}[{i}].name", f"'{name}' is already used by {seen[name]}")
        seen[name] = f"{kind}[{i}]"
    for key in ("ip", "mac"):
        owner: dict[str, str] = {}
        for i, h in enumerate(hosts):
            v = getattr(h, key).split("/")[0]
            if v in owner:
                raise _fail(f"hosts[{i}].{key}", f"{v} is already {owner[v]}'s")
            owner[v] = h.name
    for key in ("device_id", "grpc_port", "thrift_port"):
        owner = {}
        for i, s in enumerate(switches):
            v = getattr(s, key)
            if v is not None and v in owner:
                raise _fail(f"switches[{i}].{key}", f"{v} is already {owner[v]}'s")
            owner[v] = s.name


def _links(items: list, dl: dict, hosts: list[HostSpec], switches: list[SwitchSpec]) -> list[LinkSpec]:
    sw = {s.name: s for s in switches}
    known = {h.name for h in hosts} | set(sw)
    used: dict[str, dict[int, str]] = {n: {} for n in known}
    parsed = []
    for i, raw in enumerate(items):
        path = f"links[{i}]"
        d = _keys(_merge(dl, raw, path), path, _LINK_KEYS)
        ends = []
        for side in ("a", "b"):
            if side not in d:
                raise _fail(f"{path}.{side}", "is required (NODE or NODE:PORT)")
            node, port = _endpoint(d[side], f"{path}.{side}")
            if node not in known:
                raise _fail(f"{path}.{side}", f"no host or switch named '{node}'")
            if port is not None:
                if node not in sw:
                    raise _fail(f"{path}.{side}", f"'{node}' is a host: host interfaces are numbered "
                                "in link order, give just the name")
                _port_ok(port, sw[node], f"{path}.{side}")
                if port in used[node]:
                    raise _fail(f"{path}.{side}", f"port {port} of {node} is already used by {used[node][port]}")
                used[node][port] = path
            ends.append((node, port, f"{path}.{side}"))
        if ends[0][0] == ends[1][0]:
            raise _fail(path, f"both ends are '{ends[0][0]}'")
        parsed.append((path, ends, d))
    links = []
    for path, ends, d in parsed:
        eps = []
        for node, port, epath in ends:
            if port is None:
                port = _next_port(used[node], sw.get(node), epath, node in sw)
                used[node][port] = path
            eps.append(Endpoint(node, port))
        for e in eps:
            name = f"{e.node}-eth{e.port}"
            if len(name) > IFNAMSIZ:
                raise _fail(path, f"interface name '{name}' is longer than {IFNAMSIZ} characters; "
                            "use shorter node names")
        links.append(LinkSpec(
            a=eps[0], b=eps[1],
            bw=None if d.get("bw") is None else parse_rate(d["bw"], f"{path}.bw"),
            queue=_opt_int(d, "queue", path, 1, 1_000_000),
            mtu=_opt_int(d, "mtu", path, 68, 65535)))
    return links


def _port_ok(port: int, s: SwitchSpec, path: str) -> None:
    if not 1 <= port <= MAX_PORT:
        raise _fail(path, f"port {port} is outside 1..{MAX_PORT} (511 is the drop port)")
    if s.cpu_port is not None and port == s.cpu_port:
        raise _fail(path, f"port {port} is {s.name}'s CPU port")


def _next_port(used: dict[int, str], s: Optional[SwitchSpec], path: str, is_switch: bool) -> int:
    p = 1 if is_switch else 0
    while p in used or (s is not None and p == s.cpu_port):
        p += 1
    if is_switch and p > MAX_PORT:
        raise _fail(path, f"{s.name if s else ''} has no free port left")
    return p


def _check_hosts(t: Topology) -> None:
    for i, h in enumerate(t.hosts):
        n = len(t.links_of(h.name))
        if n == 0:
            raise _fail(f"hosts[{i}]", f"'{h.name}' has no link")
        if n > 1 and h.bond is None:
            raise _fail(f"hosts[{i}]", f"'{h.name}' has {n} links; give it a bond (\"bond\": \"l34\") "
                        "or a single link")
        if h.bond is not None and n > 4:
            raise _fail(f"hosts[{i}].bond", f"'{h.name}' has {n} links; a bond takes 1..4")
        if h.gw_mac is not None and h.gw is None:
            raise _fail(f"hosts[{i}].gw_mac", "needs gw")


def loads(text: str, source: str = "topology") -> Topology:
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise TopologyError(f"{source}:{e.lineno}:{e.colno}: not valid JSON: {e.msg}") from None
    try:
        return from_dict(doc, source)
    except TopologyError as e:
        raise TopologyError(f"{source}: {e}") from None


def load(path: str | Path) -> Topology:
    p = Path(path)
    try:
        text = p.read_text()
    except OSError as e:
        raise TopologyError(f"{p}: cannot read: {e.strerror}") from None
    return loads(text, str(p))


def rename_switches(t: Topology, names: dict[str, str]) -> Topology:
    """The same topology with switches renamed (old -> new); for running
    two topologies at once, as root-namespace interface names are shared."""
    doc = t.to_dict()
    for s in doc["switches"]:
        s["name"] = names.get(s["name"], s["name"])
    for l in doc["links"]:
        for side in ("a", "b"):
            node, sep, port = l[side].partition(":")
            l[side] = names.get(node, node) + sep + port
    return from_dict(doc, t.name)


def with_switch_defaults(t: Topology, **changes: Any) -> Topology:
    """The same topology with every switch changed, e.g. kind="bmv2"."""
    return replace(t, switches=tuple(replace(s, **changes) for s in t.switches))
