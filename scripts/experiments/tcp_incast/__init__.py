"""TCP incast (seed 001), in Mininet only: S senders x F TCP flows to one
receiver through the reference DUT; aggregate rate over time, flow and job
completion times, the queues alongside.

    job         parameters, plan, one job (senders, receiver, samplers)
    app         the senders' and receiver's program in the hosts
    mininet     a case (and the run) in Mininet, the CSVs
    plots       the section's figures
    section     the report's section
    cli         `p4scope run tcp-incast`
"""

from ..registry import Experiment
from . import cli, job, mininet, section

PLUGIN = Experiment(
    name=job.EXPERIMENT,
    summary="TCP incast in Mininet",
    command=cli.command,
    tables={
        "incast_jobs": "one row per job: completion times, rates, retransmissions, link drops",
        "incast_flows": "one row per flow: bytes, completion time, first and last byte",
        "incast_rate": "the aggregate rate over time at the receiver and the switch port",
        "instrument_series": "the DUT instrument's reports of the receiver port's queue",
        "instrument_delivered": "per sender: the DUT's tel_delivered counter, polled",
        "link_queue": "the receiver link's qdisc: backlog and drops",
    },
    csv_files=mininet.CSV_FILES,
    write_csvs=mininet.write_csvs,
    sections=(section.section,),
    modes=("mininet",),
)
