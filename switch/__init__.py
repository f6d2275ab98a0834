"""p4scope's switch daemon: a drop-in for BMv2's simple_switch_grpc.

The daemon (`p4scope switch`, `p4scope-switch-grpc`) takes
simple_switch_grpc's command line, runs a P4 program on the p4scope engine
and serves P4Runtime v1 over gRPC, in the same process; as `p4scope-switch`
it is simple_switch (its command line, the Thrift API, no gRPC server).

One product per folder; what both servers share is here at the top:

    options      the simple_switch_grpc and simple_switch command lines
    daemon       start-up, logging, readiness, signals, shutdown
    device       one device: pipeline config, Write/Read, packets, the lock
                 both servers take
    engine       the adapter between the managers and the dataplane engine,
                 and the engine's start-up options
    ports        Linux interfaces (AF_PACKET), pcap files and taps
    pcap_stream  one --use-files input (file or FIFO) read without blocking
    traces       per-packet trace lines (--log-console)

    p4runtime/   the P4Runtime server: the gRPC service, arbitration, the
                 pipeline and one manager per entity kind, the P4Info index
                 (the controller, p4scope.control, uses it too)
    thrift/      BMv2's run-time Thrift API on --thrift-port (what
                 simple_switch_CLI speaks), on the P4Runtime table shadow

The `switch-cli` client of the Thrift API is on the controller's side,
p4scope.control.switch_cli. The P4Runtime layer never sees how the engine
stores a table: it calls the adapter by JSON names and keeps its own
shadow of what it wrote.
"""
