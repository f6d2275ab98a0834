"""RFC 2544 (seeds 000 and 003): throughput, latency, frame loss rate,
back-to-back frames and system recovery, per frame size, on port pairs.

    params    the suite's parameters, checked (sizes, pairs, tests, search)
    theory    what the reference DUT's configuration predicts
    virtual   how each (test, frame size) case is measured on the tester
    tables    the seed-shaped tables (throughput, latency, loss, back-to-back)
    section   the report's section and plots
    cli       `p4scope run rfc2544`
"""

EXPERIMENT = "rfc2544"
