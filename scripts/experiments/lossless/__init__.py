"""A lossless class beside a lossy one (seed 001's TCP + RoCEv2
configuration): PFC on the lossless priority with ingress accounting and
headroom, RED-like ECN on its queue, CNPs in strict-priority queue 7; an
N:1 incast of both classes into one egress with PFC off and on.

    params    the classes, the incast, the PFC/ECN profile, checked
    frames    the TCP-like, RoCEv2-like and CNP frames
    measure   the cases on the reference DUT in virtual time
    tables    the summary in the seed's terms (PFC off vs on)
    section   the report's section and plot
    run, cli  `p4scope run lossless`
"""

EXPERIMENT = "lossless"

from ..registry import Experiment  # noqa: E402 (the modules below need EXPERIMENT)
from . import cli, section, tables  # noqa: E402

PLUGIN = Experiment(
    name=EXPERIMENT,
    summary="a lossless class beside a lossy one: PFC, ECN, strict CNPs (seed 001 TCP + RoCEv2)",
    command=cli.command,
    tables={
        "lossless_flows": "one row per (PFC off/on, flow): class, ingress port, priority, "
                          "tx/rx/lost frames, completion, latency, pauses obeyed",
        "lossless_classes": "one row per (PFC off/on, class): flows, tx/rx/lost, loss %, "
                            "egress queue drops, ECN marks, completion times",
        "lossless_pause": "one row per (PFC off/on, sender port): XOFF/XON frames sent, pause "
                          "time asked, headroom peak, headroom drops",
    },
    csv_files=tables.CSV_FILES,
    write_csvs=tables.write_csvs,
    sections=(section.section,),
)
