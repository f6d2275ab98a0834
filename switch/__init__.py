"""p4scope's switch daemon: a drop-in for BMv2's simple_switch_grpc.

The daemon (`p4scope switch`, `p4scope-switch-grpc`) takes
simple_switch_grpc's command line, runs a P4 program on the p4scope engine
and serves P4Runtime v1 over gRPC, in the same process; as `p4scope-switch`
it is simple_switch (its command line, the Thrift API, no gRPC server).

Modules, top to bottom (each has one job):

    options      the simple_switch_grpc and simple_switch command lines
    daemon       start-up, logging, readiness, signals, shutdown
    ports        Linux interfaces (AF_PACKET), pcap files and taps
    pcap_stream  one --use-files input (file or FIFO) read without blocking
    server       the gRPC P4Runtime service (status codes, streams)
    device       one P4Runtime device: pipeline config, Write/Read, packets
    arbitration  primary/backup election of controllers
    pipeline     one P4Info + BMv2 JSON + engine, dispatching entities
    tables, action_profiles, externs, pre, digests, valuesets, idle,
    packetio     one manager per P4Runtime entity kind
    match, actions, codec
                 checking and canonical forms of keys, actions, bytestrings
    schema, names
                 the P4Info index (ids, names, suggestions); the controller
                 (p4scope.control) uses it too, so it imports nothing above
    bmv2json, devconfig
                 what is read from the BMv2 JSON and the device config bytes
    translate    P4Info ids <-> BMv2 JSON names
    engine       the adapter between the managers and the dataplane engine

BMv2's run-time Thrift API (simple_switch_CLI, `p4scope switch-cli`):

    bmv2_runtime.thrift, rtidl
                 the services' IDL and its run-time loading (thriftpy2)
    rt_server    the TCP server on --thrift-port (loopback unless asked;
                 connection cap, idle reclaim, one log line per bad peer)
    rt_mux       the multiplexed processor, answering as Thrift's C++ one
    rt_protocol  the binary-protocol reader that refuses impossible types
                 and container sizes
    rt_handler   the Thrift handlers: locking, BMv2 error codes
    rt_target    which engine and table shadow the API acts on
    rt_tables, rt_externs, rt_pre
                 tables on the shared P4Runtime shadow; counters, registers,
                 meters, value sets; PRE nodes/groups/LAGs and mirroring
    json_p4info  a P4Info derived from a BMv2 JSON (no controller case)
    cli_main, cli_shell, cli_client, cli_program, cli_values
                 the `switch-cli` client: commands, texts, value parsing

The P4Runtime layer never sees how the engine stores a table: it calls the
adapter by JSON names and keeps its own shadow of what it wrote.
"""
