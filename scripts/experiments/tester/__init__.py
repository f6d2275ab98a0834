"""The tester: a hardware tester's procedures, run against a switch on a
testbed.

    streams   what a tester offers: ports, rate, frame size or mix, headers
    trial     one trial's per-stream results (tx, rx, loss, latency,
              sequence errors) and their aggregate
    search    the adaptive procedures built from trials: throughput (binary
              search with a loss tolerance), RFC 2544 frame-loss steps,
              back-to-back burst search, system recovery
    virtual   the `virtual` testbed: the engine's sources and sinks in
              virtual time against the embedded switch

A testbed offers `trial(streams, duration_ns) -> Trial`; the searches only
ever call that, so every procedure runs on any testbed.
"""
