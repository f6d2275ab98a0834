"""Microburst absorption (seed 000's Table 4, 2:1; seed 001's Figure 10,
4:1): k ports burst N frames each at line rate into one port; buffered =
forwarded - N (Tolly); the queue seen by the ground truth and the
instrument.

    params      the seed's sizes and port combinations, checked
    plan        cases and the per-case formulas
    virtual     a case on the reference DUT in virtual time
    mininet     a case (and the run) in Mininet; with --instrument tap, through
                another switch with the tap in its path (experiments.tap)
    tap_virtual --instrument tap in virtual time: the reference DUT with its own
                profile, the taps in its path, scored against its ground truth
    tables      Table 4 and Figure 10's shapes
    section     the report's section
    cli         `p4scope run microburst`
"""

from ..measure import TABLES as INSTRUMENT_TABLES
from ..registry import Experiment, VirtualDut
from ..tap import section as tap_section
from ..tap.tables import TABLES as TAP_TABLES
from . import cli, plan, section, tables, theory_lines, virtual

PLUGIN = Experiment(
    name=plan.EXPERIMENT,
    summary="microburst absorption 2:1 and 4:1",
    command=cli.command,
    tables={
        "microburst": "one row per burst case: N, forwarded per port and in all, buffered "
                      "frames/bytes/MB, the prediction, its error, the true peak",
        "streams": "one row per case and stream: tx/rx frames and bytes, latency",
        **INSTRUMENT_TABLES,
        **TAP_TABLES,
    },
    csv_files=tables.CSV_FILES,
    write_csvs=tables.write_csvs,
    sections=(section.section, tap_section.section),
    virtual=VirtualDut(plan.plan, virtual.measure_burst, theory_lines.theory_lines),
    modes=("virtual", "mininet"),
)
