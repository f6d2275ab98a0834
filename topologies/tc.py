"""Link settings as commands: offloads off and htb rate limits.

A user-space switch reads and writes frames through AF_PACKET sockets.
With segmentation offloads on, hosts hand the veth 64 KB TCP super-frames
that a real wire never carries, and the switch forwards them as such or
not at all (measured: ping works, TCP stalls). Checksum offloads
leave TCP/UDP checksums unfilled, which shows up as bad checksums in pcaps
and to P4 programs; worse, measured here: with only tso/gso/gro off, TCP
through `p4scope switch` never gets going (iperf3 hangs at connect). So
every interface of a run, on hosts and switches, gets them all off.

Rates use htb (netem, and with it delay, jitter and loss, is missing on
this kernel). The htb class gets a burst of at least 1 ms at the link
rate, so the rate holds when softirq processing is late, and an optional
pfifo of `queue` packets below it.
"""

from __future__ import annotations

from typing import Optional

OFFLOADS = ("rx", "tx", "sg", "tso", "gso", "gro")


def offloads_off_cmd(ifname: str) -> str:
    return "ethtool -K {} {} >/dev/null".format(ifname, " ".join(f"{o} off" for o in OFFLOADS))


def htb_burst_bytes(bw: int) -> int:
    """The htb class's burst: bytes that may pass at once after an idle
    spell (at least 1 ms at the rate). A queue behind the class therefore
    absorbs this much more than its packet limit at the start of a burst."""
    return max(15_000, bw // 8 // 1000)


def htb_cmds(ifname: str, bw: int, queue: Optional[int]) -> list[str]:
    """tc commands that shape `ifname` to `bw` bit/s."""
    burst = htb_burst_bytes(bw)
    cmds = [
        f"tc qdisc replace dev {ifname} root handle 5: htb default 1",
        f"tc class replace dev {ifname} parent 5: classid 5:1 htb rate {bw}bit ceil {bw}bit "
        f"burst {burst} cburst {burst} quantum 16000",
    ]
    if queue is not None:
        cmds.append(f"tc qdisc replace dev {ifname} parent 5:1 handle 10: pfifo limit {queue}")
    return cmds
