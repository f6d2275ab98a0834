"""The Mininet interface of emulated links: offloads off, MTU and htb
(commands and reasons in tc.py). Delay, jitter and loss are refused with
an error, where Mininet's TCIntf prints a message and carries on unshaped.
"""

from __future__ import annotations

from typing import Any, Optional

from mininet.link import Intf

from .shell import run_checked
from .tc import htb_cmds, offloads_off_cmd


class P4Intf(Intf):
    """A Mininet interface configured for a P4 switch run."""

    def config(self, bw: Optional[int] = None, queue: Optional[int] = None,
               mtu: Optional[int] = None, **params: Any) -> dict:
        for k in ("delay", "jitter", "loss", "max_queue_size"):
            if params.pop(k, None) is not None:
                raise ValueError(f"{self.name}: {k} needs netem, which this kernel does not have")
        result = super().config(**params)
        run_checked(self.node, offloads_off_cmd(self.name))
        if mtu is not None:
            run_checked(self.node, f"ip link set dev {self.name} mtu {mtu}")
        if bw is not None:
            for c in htb_cmds(self.name, bw, queue):
                run_checked(self.node, c)
        elif queue is not None:
            raise ValueError(f"{self.name}: queue needs bw (it is the htb class's queue)")
        self.bw, self.queue, self.mtu = bw, queue, mtu
        return result
