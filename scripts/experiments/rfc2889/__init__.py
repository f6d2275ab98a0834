"""RFC 2889 (seed 003, as Xena Valkyrie2889 reports it): forwarding in a
full mesh and in partial meshes 1:N and N:N, congestion control, forward
pressure, maximum forwarding rate, address caching capacity and learning
rate, errored frames filtering, broadcast forwarding rate and latency, on
the reference DUT in virtual time (alone
or through a chain of switches), or on a DUT in Mininet.

    params      the suite's parameters, checked; the tests not measured yet
    topology    which ports do what in each test, and their streams
    verdicts    the pass/fail rules on plain numbers
    context     what a procedure gets from the run (testbed, storing, rates)
    forwarding  meshes (forwarding per load, throughput search), maximum
                forwarding rate, congestion control
    broadcast   broadcast forwarding rate and latency
    pressure    forward pressure (a gap below 96 bit; the gap received)
    errored     errored frames filtering (undersize, oversize, bad FCS)
    dut_mac     what those two set on the DUT for their trials
    controller  the DUT's learning path (digests, the controller's
                P4Runtime writes) in virtual time
    address     address caching capacity and learning rate
    address_mininet   the address trial in Mininet
    chain       the chain testbed: the tester on the first and the last of
                N switches in virtual time
    layers      seed 003's latency per layer beside a chain run
    measure     the cases and the measure function
    tables      the seed-shaped tables
    section     the report's section and plots (section_setup: the testbed's
                method, what it leaves out, the per-layer latency)
    run, cli    `p4scope run rfc2889` (chain_run: through a chain)
"""

EXPERIMENT = "rfc2889"

from ..registry import Experiment  # noqa: E402 (the modules below need EXPERIMENT)
from . import cli, section, tables  # noqa: E402

PLUGIN = Experiment(
    name=EXPERIMENT,
    summary="RFC 2889 meshes, congestion, forward pressure, max forwarding rate, address "
            "handling, errored frames, broadcast",
    command=cli.command,
    tables={
        "rfc2889_trials": "one row per forwarding, throughput, congestion, forward pressure, "
                          "errored frames or broadcast trial, "
                          "stored as it ends: offered and achieved rates, tx/rx/lost, passed",
        "rfc2889_address_trials": "one row per address trial: addresses, rate, test frames, "
                                  "learning/monitor port rx, learnt, controller service time",
        "rfc2889_broadcast_ports": "broadcast: per receiving port at the rate found: rx, loss, "
                                   "latency",
        "rfc2889_results": "one row per case: the answer and its Pass/Fail",
        "rfc2889_layers": "--chain: per chain length 1..N, frame size and direction, the "
                          "tester's latency and jitter, and how far the hops add up from it",
        "rfc2889_hops": "--chain: per frame size, direction and hop of the longest chain, the "
                        "switch's residence (ground truth) and the wire into it",
    },
    csv_files=tables.CSV_FILES,
    write_csvs=tables.write_csvs,
    sections=(section.section,),
    modes=("virtual", "mininet"),
)
