"""p4scope.topologies: Mininet emulation with p4scope's switch or BMv2.

* spec: topologies as data (JSON), validated, with errors that name the bad
  field; builders: the standard shapes (port pairs, N hosts on one switch,
  N:1 incast, a chain, a LAG host, leaf-spine) as Python.
* cmdline: the simple_switch_grpc argument vectors both switch kinds get.
* nodes, intf, lag: Mininet node, interface and host-bond classes.
* run, manifest, clean: building a topology under a run directory that
  records everything created, and removing exactly that, also after a crash.
* traffic: the real-time traffic generator/analyzer (p4scope-trafgen) from
  Python.

Mininet itself is imported only by the modules that need it (nodes, run),
so reading and checking topologies works without it.
"""
