"""The seed experiments in Mininet: real host stacks through the reference
DUT (p4scope's switch, or BMv2 where installed), configured by the
controller from the topology.

    testbed   a topology in Mininet, the DUT in every switch, the fabric
              controller (learning, LAGs, telemetry), link watching
"""
