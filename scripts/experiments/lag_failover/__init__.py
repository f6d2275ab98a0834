"""Link aggregation failover (seed 004, Tolly's Sun Trunking test): a
2-member trunk's throughput with 2 and 3 clients per load-balancing policy,
and the outage and recovery time when a member is pulled and restored under
load, with failover by the controller and in the data plane (watch ports);
in virtual time, or with real traffic through the reference DUT in Mininet
(root), the member links taken down and up with `ip link set`.

    policies    the seed's policies and how the reference DUT does each
    params      clients, policies, members, load, schedule, checked
    controller  the controller reacting to port events in virtual time
    analysis    lost frames per event, outage, recovery (both modes), member rates
    cases       what both modes share: the plan, run.json's parameters, a case's rows
    measure     the trials on the tester, the DUT compiled per policy
    tables      the seed-shaped tables (Figures 1 and 2)
    section     the report's section and plot
    run, cli    `p4scope run lag-failover [--mode virtual|mininet]`
    mininet_params, mininet_events, link_changes, member_counters,
    mininet_measure, mininet_run
                the Mininet half: its parameters, the link events, when the
                kernel announced them and the loss each one cost, the member
                links' counters, the cases on a testbed per policy, the run
"""

EXPERIMENT = "lag-failover"

from ..registry import Experiment  # noqa: E402 (the modules below need EXPERIMENT)
from . import cli, section, tables  # noqa: E402

PLUGIN = Experiment(
    name=EXPERIMENT,
    summary="a 2-member trunk's throughput per policy and its failover (seed 004)",
    command=cli.command,
    tables={
        "lag_failover_trials": "one row per trial, stored as it ends: test, policy, clients, "
                               "failover, iteration, offered, what the trunk carried, which "
                               "member carried which client, frames sent/received/lost",
        "lag_failover_members": "throughput trials: one row per member port: Gbit/s and "
                                "utilization after the warm-up",
        "lag_failover_events": "failover trials: one row per link event: frames lost to it, "
                               "outage, recovery time, when the controller acted, the "
                               "member's frames dropped while down",
        "lag_failover_series": "the first iteration of each failover case: layer-1 Gbit/s per "
                               "member port and time bin",
        "lag_failover_throughput": "one row per (policy, clients): the trunk's throughput "
                                   "averaged over the iterations, or why the DUT cannot",
        "lag_failover_outage": "one row per (policy, clients, failover, event): frames lost, "
                               "outage and recovery averaged over the iterations, or why the "
                               "DUT cannot",
    },
    csv_files=tables.CSV_FILES,
    write_csvs=tables.write_csvs,
    sections=(section.section,),
    modes=("virtual", "mininet"),
)
