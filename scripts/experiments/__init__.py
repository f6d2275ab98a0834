"""The seed reports' experiments in virtual time, their results and reports.

    p4scope run microburst|fairness|all [options]   measure into results/<run-id>/
    p4scope report RUN_DIR                          render report.html and PNGs

Modules, each with one job:

    linerate    Ethernet line-rate arithmetic (preamble + IFG, iMIX)
    figures     derived figures (Jain, shares, occupancy, Tolly absorption,
                the instrument's error against ground truth): pure functions
    theory      what the traffic manager's configuration predicts
    params      the experiments' parameters, checked (sizes, ports, profiles)
    rundir      one run's folder, written atomically (run.json, Parquet, CSV)
    runner      cases one after another, progress bar, Ctrl-C keeps results
    seedtables  the seed reports' table shapes from the tidy tables
    testbed     the embedded switch in virtual time, configured over P4Runtime
    microburst, fairness
                the two experiments: cases and how each is measured
    report, plots_web, plots_png
                the report: reads a run folder only, never measures
    cli         `p4scope run ...` and `p4scope report`

Measuring and plotting are kept apart: a report is rendered from the stored
tables alone, so it can always be regenerated.
"""
