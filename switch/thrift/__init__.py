"""BMv2's run-time Thrift API (what simple_switch_CLI speaks) on --thrift-port.

    bmv2_runtime.thrift, idl
                 the services' IDL and its run-time loading (thriftpy2);
                 the client (p4scope.control.switch_cli) loads it from here
    server       the TCP server (loopback unless asked; connection cap,
                 idle reclaim, one log line per bad peer)
    mux          the multiplexed processor, answering as Thrift's C++ one
    protocol     the binary-protocol reader that refuses impossible types
                 and container sizes
    handler      the Thrift handlers: locking, BMv2 error codes
    errors       BMv2's error codes, independent of the Thrift layer
    target       which engine and table shadow the API acts on
    tables, externs, pre
                 tables on the shared P4Runtime shadow; counters, registers,
                 meters, value sets; PRE nodes/groups/LAGs and mirroring
    json_p4info  a P4Info derived from a BMv2 JSON (no controller case)
"""
