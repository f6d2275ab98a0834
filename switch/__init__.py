"""p4scope's switch daemon: a drop-in for BMv2's simple_switch_grpc.

The daemon (`p4scope switch`, `p4scope-switch-grpc`) takes
simple_switch_grpc's command line, runs a P4 program on the p4scope engine
and serves P4Runtime v1 over gRPC, in the same process.

Layers, top to bottom (each module has one job):

    options     the simple_switch_grpc command line
    daemon      start-up, ports, signals, readiness, shutdown
    server      the gRPC P4Runtime service (status codes, streams)
    device      one P4Runtime device: pipeline config, Write/Read dispatch
    arbitration primary/backup election per device
    entities/*  one manager per P4Runtime entity (tables, action profiles,
                counters/meters/registers, PRE, digests, packet I/O)
    translate   P4Info ids <-> BMv2 JSON names
    engine      the adapter between the managers and the dataplane engine

The P4Runtime layer never sees how the engine stores a table: it calls the
adapter by JSON names and keeps its own shadow of what it wrote.
"""
