"""LAG hashing (seed 002): 1..12 concurrent fixed-rate streams, 15 runs
each with new L4 ports, out of one 100G port and out of a 4x25G LAG of
the reference DUT; per-stream achieved rate, its spread, the sum vs the
target and the per-member load, beside what a uniform hash predicts.

    params    the test's parameters, checked (streams, runs, LAG, hash)
    uniform   a uniform hash's figures, exact: balanced, idle member,
              busiest member, expected sum; z and the verdict
    measure   the cases on the virtual testbed; the LAG written by the
              controller after each reset
    tables    the seed-shaped tables
    section   the report's section and plots
    run, cli  `p4scope run lag-hash`
"""

EXPERIMENT = "lag-hash"

from ..registry import Experiment  # noqa: E402 (the modules below need EXPERIMENT)
from . import cli, section, tables  # noqa: E402

PLUGIN = Experiment(
    name=EXPERIMENT,
    summary="LAG hashing: 1..12 streams over one port vs a LAG, vs a uniform hash (seed 002)",
    command=cli.command,
    tables={
        "lag_hash_streams": "one row per (set-up, stream count, run, stream): its L4 ports, "
                            "the port it left on, frames, achieved rate",
        "lag_hash_members": "one row per (set-up, stream count, run, egress port): streams "
                            "hashed to it, load, utilization",
        "lag_hash_runs": "one row per (set-up, stream count, run): summed rate vs target, "
                         "spread over the streams, busiest member, idle members, balanced",
        "lag_hash_results": "one row per (set-up, stream count): the runs' figures beside the "
                            "uniform hash's, z of the busiest member's streams",
    },
    csv_files=tables.CSV_FILES,
    write_csvs=tables.write_csvs,
    sections=(section.section,),
)
