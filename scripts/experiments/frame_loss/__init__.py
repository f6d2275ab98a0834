"""Frame loss at line rate per frame size (seed 000, Tolly's Tables 1 and
2): 32 ports in port pairs (layer 2 and 3) and in a full mesh, 6 ports in
pairs.

    params    sizes, scenarios, load, checked
    measure   the cases and one trial per case on the tester
    tables    Tolly's table shape
    section   the report's section
    run, cli  `p4scope run frame-loss`
"""

EXPERIMENT = "frame-loss"

from ..registry import Experiment  # noqa: E402 (the modules below need EXPERIMENT)
from . import cli, section, tables  # noqa: E402

PLUGIN = Experiment(
    name=EXPERIMENT,
    summary="frame loss at line rate per frame size (Tolly Tables 1 and 2)",
    command=cli.command,
    tables={"frame_loss": "one row per (scenario, frame size): tx, rx, lost, loss %, frames "
                          "queued at the end, generator shortfall",
            "frame_loss_streams": "the same per stream"},
    csv_files=tables.CSV_FILES,
    write_csvs=tables.write_csvs,
    sections=(section.section,),
)
