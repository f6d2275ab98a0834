"""A whole topology configured by the controller (`p4scope.control.fabric`).

    from p4scope.control.fabric import configure
    fabric = configure(topo, {"s1": "127.0.0.1:50051"}, pipeline=Pipeline.from_build("dut"))

* plan: what each switch needs (flood groups over a spanning tree, LAGs,
  routes, telemetry), computed from the topology alone;
* learning: L2 learning by the controller, aware of LAGs and the tree;
* configure: writes a plan with the control/ apps, and re-plans when a
  link fails or comes back.
"""

from .configure import Fabric, LinkEvent, configure
from .plan import FabricError, FabricOptions, FabricPlan, SwitchPlan, TelemetryOptions, plan, router_arp

__all__ = ["Fabric", "FabricError", "FabricOptions", "FabricPlan", "LinkEvent", "SwitchPlan",
           "TelemetryOptions", "configure", "plan", "router_arp"]
