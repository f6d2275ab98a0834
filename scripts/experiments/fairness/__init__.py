"""N:1 incast fairness (seed 000's Table 3): N ports stream the Tolly iMIX
at line rate into one port; per-stream rate and share, bandwidth vs
packet-rate share, Jain's index, and the instrument's per-ingress shares.

    params      the seed's port combinations and mix, checked
    plan        cases and the per-case figures
    virtual     a case on the reference DUT in virtual time
    tap_virtual --instrument tap in virtual time: the reference DUT with its own
                profile, the taps in its path, their shares scored against its
                ground truth
    mininet     a case (and the run) in Mininet
    tables      Table 3's shape and the summary
    section     the report's section
    cli         `p4scope run fairness`
"""

from ..measure import TABLES as INSTRUMENT_TABLES
from ..registry import Experiment, VirtualDut
from ..tap import section_fairness as tap_section
from ..tap.tables import TABLES as TAP_TABLES
from . import cli, plan, section, tables, virtual

PLUGIN = Experiment(
    name=plan.EXPERIMENT,
    summary="N:1 incast fairness with iMIX",
    command=cli.command,
    tables={
        "fairness": "one row per incast case: Jain's index, max/min share, deviation from "
                    "1/N, the instrument's Jain index and share error",
        "streams": "one row per case and stream: the steady-state window's rx, Gbps, shares",
        "instrument_shares": "per ingress port: the DUT's tel_delivered counter and its shares",
        **INSTRUMENT_TABLES,
        **TAP_TABLES,
        "tap_shares": "with --instrument tap, per case and ingress port: the share of what the "
                      "congested port sent (bandwidth, packet rate), of its queue, and the "
                      "drops, the taps' against the DUT's truth",
    },
    csv_files=tables.CSV_FILES,
    write_csvs=tables.write_csvs,
    sections=(section.section, tap_section.section),
    virtual=VirtualDut(plan.plan, virtual.measure_incast, plan.theory_lines),
    modes=("virtual", "mininet"),
)
