"""RFC 2544 (seeds 000 and 003): throughput, latency, frame loss rate,
back-to-back frames and system recovery, per frame size, on port pairs.

    params    the suite's parameters, checked (sizes, pairs, tests, search)
    theory    what the reference DUT's configuration predicts
    virtual   how each (test, frame size) case is measured on the tester
    tables    the seed-shaped tables (throughput, latency, loss, back-to-back)
    section   the report's section and plots
    run       a run in virtual time or in Mininet (the tester's run)
    cli       `p4scope run rfc2544`
"""

EXPERIMENT = "rfc2544"

from ..registry import Experiment  # noqa: E402 (the modules below need EXPERIMENT)
from . import cli, section, tables  # noqa: E402

PLUGIN = Experiment(
    name=EXPERIMENT,
    summary="RFC 2544 throughput, latency, frame loss, back-to-back, system recovery",
    command=cli.run_rfc2544,
    tables={
        "rfc2544_trials": "one row per trial, stored as it ends: offered, passed, tx/rx/lost, "
                          "queued at the end, rates, latency",
        "rfc2544_streams": "the same trials per stream (latency percentiles, sequence errors)",
        "rfc2544_latency_hist": "latency trials: FIFO latency histogram per stream",
        "rfc2544_results": "one row per (test, frame size): the answer and the prediction",
    },
    csv_files=tables.CSV_FILES,
    write_csvs=tables.write_csvs,
    sections=(section.section,),
    modes=("virtual", "mininet"),
)
