"""The Mininet testbed the experiments share (root): the reference DUT (or
BMv2) in every switch of a topology, configured by the controller, links
watched; a run's testbeds per switch kind; the N:1 topology; the options
and the ending every `p4scope run` shares.

    testbed   a topology in Mininet with the DUT and the fabric controller
    driver    one Mininet run: cases through the run-folder machinery
    shape     N:1 topology, link rates and sizes checked, warm-up ping
    cli       the Mininet options, the host check, how a run ends
"""
