"""`p4scope switch-cli`: simple_switch_CLI's commands for a running switch
(p4scope's or BMv2's), over BMv2's run-time Thrift API, as the rest of
p4scope.control speaks P4Runtime. The IDL is the switch's
(p4scope.switch.thrift.idl), so client and server speak one API.

    main     the command line (connect, fetch the JSON, run the commands)
    shell    the command interpreter: commands, texts as simple_switch_CLI
    client   one connection, one thriftpy2 client per multiplexed service
    program  what the client knows of the program, read from the JSON
    values   values as typed at the prompt (IPv4, MAC, IPv6, ints)
"""
