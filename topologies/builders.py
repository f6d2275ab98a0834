"""The standard topologies of the experiments, as Python.

Each builder writes a topology document and reads it with spec.from_dict,
so a built topology and a file are checked the same way and
``builder(...).dumps()`` is a valid file. Every builder takes ``switch``
(settings for every switch, e.g. ``{"kind": "bmv2", "program": "x.json"}``)
and ``bw`` (rate of host links, see spec.parse_rate). Roles that the
experiments need (senders, receiver, pairs) go into the ``control``
section.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

from .spec import Topology, from_dict


def _doc(name: str, hosts: list[dict], switches: list[dict], links: list[dict],
         switch: Optional[dict], control: Optional[dict] = None) -> Topology:
    doc: dict[str, Any] = {"name": name, "hosts": hosts, "switches": switches, "links": links}
    if switch:
        doc["defaults"] = {"switch": dict(switch)}
    if control:
        doc["control"] = control
    return from_dict(doc, name)


def _link(a: str, b: str, bw: Any = None) -> dict:
    return {"a": a, "b": b, **({"bw": bw} if bw is not None else {})}


def _need(value: int, lo: int, hi: int, what: str) -> None:
    if not lo <= value <= hi:
        raise ValueError(f"{what} must be in {lo}..{hi}, not {value}")


def single_switch(n_hosts: int, switch: Optional[dict] = None, bw: Any = None) -> Topology:
    """One switch, hosts h1..hN on ports 1..N (full-mesh traffic)."""
    _need(n_hosts, 1, 510, "n_hosts")
    hosts = [{"name": f"h{i}"} for i in range(1, n_hosts + 1)]
    links = [_link(f"h{i}", f"s1:{i}", bw) for i in range(1, n_hosts + 1)]
    return _doc(f"single-{n_hosts}", hosts, [{"name": "s1"}], links, switch)


def port_pairs(n_pairs: int, switch: Optional[dict] = None, bw: Any = None) -> Topology:
    """One switch, 2N hosts; ports 2k-1 and 2k form a pair (RFC 2544/2889
    port-pair tests). control.pairs lists them."""
    _need(n_pairs, 1, 255, "n_pairs")
    n = 2 * n_pairs
    hosts = [{"name": f"h{i}"} for i in range(1, n + 1)]
    links = [_link(f"h{i}", f"s1:{i}", bw) for i in range(1, n + 1)]
    pairs = [[f"h{2 * k - 1}", f"h{2 * k}"] for k in range(1, n_pairs + 1)]
    return _doc(f"pairs-{n_pairs}", hosts, [{"name": "s1"}], links, switch, {"pairs": pairs})


def incast(n_senders: int, switch: Optional[dict] = None, bw: Any = None,
           receiver_bw: Any = None) -> Topology:
    """N:1 incast: senders h1..hN on ports 1..N, the receiver h(N+1) on port
    N+1 (its link may be slower: receiver_bw)."""
    _need(n_senders, 1, 509, "n_senders")
    r = n_senders + 1
    hosts = [{"name": f"h{i}"} for i in range(1, r + 1)]
    links = [_link(f"h{i}", f"s1:{i}", bw) for i in range(1, r)]
    links.append(_link(f"h{r}", f"s1:{r}", receiver_bw if receiver_bw is not None else bw))
    control = {"senders": [f"h{i}" for i in range(1, r)], "receiver": f"h{r}"}
    return _doc(f"incast-{n_senders}", hosts, [{"name": "s1"}], links, switch, control)


def chain(n_switches: int = 4, switch: Optional[dict] = None, bw: Any = None,
          fabric_bw: Any = None) -> Topology:
    """h1 - s1 - s2 - ... - sN - h2. Each switch: port 1 towards h1, port 2
    towards h2 (RFC 2889 tests through chained switches)."""
    _need(n_switches, 1, 64, "n_switches")
    sws = [{"name": f"s{i}"} for i in range(1, n_switches + 1)]
    links = [_link("h1", "s1:1", bw)]
    links += [_link(f"s{i}:2", f"s{i + 1}:1", fabric_bw) for i in range(1, n_switches)]
    links.append(_link("h2", f"s{n_switches}:2", bw))
    return _doc(f"chain-{n_switches}", [{"name": "h1"}, {"name": "h2"}], sws, links, switch,
                {"path": [f"s{i}" for i in range(1, n_switches + 1)]})


def lag(members: int = 2, clients: int = 2, switch: Optional[dict] = None, bw: Any = None,
        member_bw: Any = None, hash: str = "l34") -> Topology:
    """A server h1 bonded over `members` links (switch ports 1..members) and
    clients h2.. on the following ports (Sun Trunking / LACP bond tests).
    control.lag gives the switch ports of the bond."""
    _need(members, 2, 4, "members")
    _need(clients, 1, 500, "clients")
    hosts = [{"name": "h1", "bond": hash}] + [{"name": f"h{i}"} for i in range(2, clients + 2)]
    links = [_link("h1", f"s1:{p}", member_bw if member_bw is not None else bw)
             for p in range(1, members + 1)]
    links += [_link(f"h{i}", f"s1:{members + i - 1}", bw) for i in range(2, clients + 2)]
    control = {"lag": {"host": "h1", "switch": "s1", "ports": list(range(1, members + 1))}}
    return _doc(f"lag-{members}x{clients}", hosts, [{"name": "s1"}], links, switch, control)


def leaf_spine(leaves: int = 2, spines: int = 2, hosts_per_leaf: int = 2,
               switch: Optional[dict] = None, bw: Any = None, fabric_bw: Any = None) -> Topology:
    """Leaves l1..lL, spines p1..pS, hosts on each leaf. Leaf ports 1..H go
    to its hosts, H+1..H+S to the spines; spine port i goes to leaf i.
    Host j of leaf i is h<i>x<j> with 10.0.<i>.<j>/16: one subnet, so the
    controller decides whether the fabric bridges or routes it."""
    _need(leaves, 1, 64, "leaves")
    _need(spines, 1, 64, "spines")
    _need(hosts_per_leaf, 1, 64, "hosts_per_leaf")
    hosts, links = [], []
    sws = [{"name": f"l{i}"} for i in range(1, leaves + 1)] + [{"name": f"p{k}"} for k in range(1, spines + 1)]
    for i in range(1, leaves + 1):
        for j in range(1, hosts_per_leaf + 1):
            hosts.append({"name": f"h{i}x{j}", "ip": f"10.0.{i}.{j}/16",
                          "mac": f"02:00:00:00:{i:02x}:{j:02x}"})
            links.append(_link(f"h{i}x{j}", f"l{i}:{j}", bw))
        for k in range(1, spines + 1):
            links.append(_link(f"l{i}:{hosts_per_leaf + k}", f"p{k}:{i}", fabric_bw))
    control = {"leaves": [f"l{i}" for i in range(1, leaves + 1)],
               "spines": [f"p{k}" for k in range(1, spines + 1)]}
    return _doc(f"leafspine-{leaves}x{spines}x{hosts_per_leaf}", hosts, sws, links, switch, control)


BUILDERS: dict[str, Callable[..., Topology]] = {
    "single": single_switch,
    "pairs": port_pairs,
    "incast": incast,
    "chain": chain,
    "lag": lag,
    "leaf-spine": leaf_spine,
}
