"""p4scope's switch daemon: a drop-in for BMv2's simple_switch_grpc.

The daemon (`p4scope switch`, `p4scope-switch-grpc`) takes
simple_switch_grpc's command line, runs a P4 program on the p4scope engine
and serves P4Runtime v1 over gRPC, in the same process.

Modules, top to bottom (each has one job):

    options      the simple_switch_grpc command line
    daemon       start-up, logging, readiness, signals, shutdown
    ports        Linux interfaces (AF_PACKET), pcap files and taps
    server       the gRPC P4Runtime service (status codes, streams)
    device       one P4Runtime device: pipeline config, Write/Read, packets
    arbitration  primary/backup election of controllers
    pipeline     one P4Info + BMv2 JSON + engine, dispatching entities
    tables, action_profiles, externs, pre, digests, valuesets, idle,
    packetio     one manager per P4Runtime entity kind
    match, actions, codec
                 checking and canonical forms of keys, actions, bytestrings
    schema       the P4Info index (ids, names, suggestions)
    bmv2json, devconfig
                 what is read from the BMv2 JSON and the device config bytes
    translate    P4Info ids <-> BMv2 JSON names
    engine       the adapter between the managers and the dataplane engine

The P4Runtime layer never sees how the engine stores a table: it calls the
adapter by JSON names and keeps its own shadow of what it wrote.
"""
