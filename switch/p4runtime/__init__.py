"""The P4Runtime server of the switch daemon (P4Runtime v1, as PI on BMv2).

    server       the gRPC P4Runtime service (status codes, streams)
    arbitration  primary/backup election of controllers
    pipeline     one P4Info + BMv2 JSON + engine; ENTITY_KINDS, the table
                 from entity kind to manager that Write and Read go through
    tables, action_profiles, externs, pre, digests, valuesets, idle,
    packetio     one manager per P4Runtime entity kind
    fast_writes, table_codec
                 the common table-entry update in one step, INSERTs batched
                 into one engine call (the rest goes to tables)
    match, actions, codec
                 checking and canonical forms of keys, actions, bytestrings
    errors       P4RuntimeError and its google.rpc codes
    schema, names
                 the P4Info index (ids, names, suggestions); the controller
                 (p4scope.control) uses it too, so it imports nothing above
    bmv2json, devconfig
                 what is read from the BMv2 JSON and the device config bytes
    translate    P4Info ids <-> BMv2 JSON names
    wildcard     read requests' id 0

Adding an entity kind: its manager module here, one line in
pipeline.ENTITY_KINDS (and the manager built in Pipeline.__init__), the
engine calls it needs (switch/engine.py: EngineAdapter and DataplaneEngine).
"""
