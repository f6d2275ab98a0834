"""Performance with packet processing features on (seed 001, ESG's
Figures 11-13): throughput and latency on six port pairs at 64, 82 and
97 B with 24 ACL rules off and on, their difference, and bandwidth
fairness N:1 with the rules on; in virtual time, or with real traffic
through the reference DUT in Mininet (root).

    params    sizes, pairs, fairness scenarios, search, mode, checked
    rules     the 24 rules (control/apps/acl.py) and the test frames' headers
    measure   the cases on the tester; the rules written before each trial
    tables    the seed-shaped tables (with, without, difference; shares)
    section   the report's section and plots
    run, cli  `p4scope run features [--mode virtual|mininet]`
"""

EXPERIMENT = "features"

from ..registry import Experiment  # noqa: E402 (the modules below need EXPERIMENT)
from . import cli, section, tables  # noqa: E402

PLUGIN = Experiment(
    name=EXPERIMENT,
    summary="throughput, latency and fairness with 24 ACL rules on (seed 001, ESG Fig. 11-13)",
    command=cli.command,
    tables={
        "features_trials": "one row per trial, stored as it ends: test, rules off/on, frame "
                           "size, offered, passed, tx/rx/lost, queued at the end, latency",
        "features_results": "one row per (test, rules, frame size): throughput or latency",
        "features_acl_hits": "after each rules-on case: one row per ACL rule with the packets "
                             "and bytes its direct counter counted in the case's last trial",
        "features_fairness": "one row per fairness scenario: N, frame size, egress rate, Jain's "
                             "index, smallest and largest share",
        "features_shares": "one row per (fairness scenario, source port): received rate and "
                           "share of the egress",
    },
    csv_files=tables.CSV_FILES,
    write_csvs=tables.write_csvs,
    sections=(section.section,),
    modes=("virtual", "mininet"),
)
