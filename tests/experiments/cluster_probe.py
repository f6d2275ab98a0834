"""A worker function for the Dask cluster tests that can end its worker
process (Dask workers import it by name, so it lives in a module)."""

from __future__ import annotations

import os

from tests.experiments import runner_workers


def measure(case) -> dict:
    if case.params.get("die"):
        os._exit(3)  # the worker process dies with the case in flight
    return runner_workers.measure(case)
