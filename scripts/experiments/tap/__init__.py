"""The instrument in the path of another switch: p4src/tap.p4 in a p4scope
switch on every link of a DUT that is not p4scope's (a Linux bridge, ...),
and that DUT's queues inferred from what the tap saw.

    inference   per DUT egress port, from the tap's every-frame reports:
                occupancy over time, per ingress port, drops, bursts; lost
                reports marked, never filled in (pure, no I/O)
    placement   where the tap goes in Mininet (topology, wiring)
    testbed     the tap around a DUT in Mininet, configured over P4Runtime,
                its reports captured
    scoring     the inferred queue against a reference sampled from the DUT
    virtual     the tap around the reference DUT in virtual time: one engine
                Fabric, a tap switch on each DUT link, the links' time
    truth       the inferred queue against the DUT's own ground truth
                (virtual time): the bars per burst and per case
    tables      the tables a run with the tap stores
    plots, section, section_truth
                the report's section (section_truth: with the DUT's truth)
    cli         --instrument tap --dut ..., checked

An experiment runs its cases with the tap in its own folder
(microburst/tap.py in Mininet, microburst/tap_virtual.py in virtual time).
"""
