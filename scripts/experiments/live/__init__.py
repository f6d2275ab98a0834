"""The live dashboard: queue occupancy, per-ingress shares, bursts and drops
of a run, in a browser page served from this process.

    model         a run as the page sees it: cases, their summaries, series
    culprits      the ingress ports and flows that built a stored burst
    reduce        series reduced on the server to one value per pixel column
    server        the asyncio server (starlette + uvicorn): page, assets, events
    session       `p4scope run ... --live`: the server beside a running run
    switch_model  a running switch as the page sees it (a sliding window)
    rolling       that window's pixel columns
    attach        its sources: INT reports on UDP, read-only P4Runtime reads
    testbed_model a Mininet run: its progress, and its switch's window seen
                  twice (the links' queues, the DUT's instrument)
    link_queues   the links' queues (tc qdisc), their bursts and drops
    testbed_session  `p4scope run ... --mode mininet --live`: the server
                  beside the run, watching its testbeds (mininet.driver)
    cli           the --live options and `p4scope watch RUN_DIR` (replay) or
                  `p4scope watch --switch/--reports` (a running switch)

The run tells the dashboard what happens through the runner's generic
`on_event` hook (runner.RunEvent); nothing in the experiments' framework
imports this package.
"""
