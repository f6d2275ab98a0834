"""RFC 2889's pass/fail rules, as the seed's tester (Xena Valkyrie2889)
reports them, on plain numbers: nothing here knows a testbed.

    forwarding and throughput   a trial passes when its loss is within the
                                tolerance and no frame went to a port it
                                was not meant for; a throughput search
                                passes when some rate passed
    congestion control          fails on head-of-line blocking (the
                                uncongested port loses frames); back
                                pressure is reported when the sources were
                                held back (sent less than offered)
    maximum forwarding rate     RFC 2889 sets no pass/fail ("-")
    address caching / learning  a trial passes when the learning port got
                                every test frame and the monitor port
                                nothing (no flooding)
    broadcast                   a trial passes when every receiving port
                                got every broadcast frame
    forward pressure            fails when the DUT sent frames closer than
                                96 bits (receive utilisation above 100 %)
    errored frames filtering    a trial passes when no errored frame was
                                forwarded and the valid ones were
"""

from __future__ import annotations

from typing import Iterable, Optional

from ..tester.trial import SHORT_GENERATOR

PASS, FAIL, NONE = "Pass", "Fail", "-"


def loss_pct(tx: int, rx: int) -> float:
    """Frames sent that did not arrive, % of those sent (0 when none was sent)."""
    return 100.0 * max(tx - rx, 0) / tx if tx else 0.0


def forwarding_passed(tx: int, rx: int, misdelivered: int = 0,
                      tolerance_pct: float = 0.0) -> bool:
    """A forwarding or throughput trial: loss within the tolerance (0:
    RFC 2889) and nothing delivered to a port it was not meant for."""
    return loss_pct(tx, rx) <= tolerance_pct + 1e-12 and misdelivered == 0


def search_result(value: Optional[float]) -> str:
    """A search (throughput, broadcast rate, address count, learning rate)
    passes when it found a value that passed; it fails when even the
    lowest value tried lost frames or flooded."""
    return PASS if value is not None and value > 0 else FAIL


def head_of_line_blocking(uc_tx: int, uc_rx: int, tolerance_pct: float = 0.0) -> bool:
    """The uncongested port lost frames because another port is congested."""
    return not forwarding_passed(uc_tx, uc_rx, 0, tolerance_pct)


def back_pressure(sent: int, offered: float) -> bool:
    """The sources were held back: they sent less than they offered (pause
    frames or any other flow control), by more than a generator's margin."""
    return offered > 0 and sent < SHORT_GENERATOR * offered


def congestion_result(uc_tx: int, uc_rx: int, tolerance_pct: float = 0.0) -> str:
    """RFC 2889 s. 5.5: fail on head-of-line blocking."""
    return FAIL if head_of_line_blocking(uc_tx, uc_rx, tolerance_pct) else PASS


def address_passed(test_tx: int, learn_rx: int, monitor_rx: int) -> bool:
    """An address caching or learning trial: every test frame reached the
    learning port (where its address was learnt) and none was flooded to
    the monitor port."""
    return test_tx > 0 and learn_rx >= test_tx and monitor_rx == 0


def broadcast_passed(tx: int, rx_per_port: Iterable[int], echoed: int = 0) -> bool:
    """Every receiving port got every broadcast frame, and none came back
    out of the port that sent it."""
    rx = list(rx_per_port)
    return bool(rx) and tx > 0 and all(r >= tx for r in rx) and echoed == 0


def overall(results: Iterable[str]) -> str:
    """A test's verdict over its rows: Fail if any row failed, Pass if all
    passed, '-' when no row has a verdict."""
    rs = [r for r in results if r in (PASS, FAIL)]
    if not rs:
        return NONE
    return FAIL if FAIL in rs else PASS


def forward_pressure_result(min_gap_bits: Optional[float], rate_bps: float) -> str:
    """RFC 2889 s. 5.4: fail when the DUT sent two frames closer than 96
    bits (a receive utilisation above 100 %), within the sink's resolution
    (1 ps at the port's rate, 0.1 bit at 100G); no verdict when fewer than
    two frames came."""
    if min_gap_bits is None or min_gap_bits != min_gap_bits:
        return NONE
    return PASS if min_gap_bits >= 96.0 - max(rate_bps * 1e-12, 1e-6) else FAIL


def errored_passed(valid_tx: int, valid_rx: int, errored_rx: int,
                   tolerance_pct: float = 0.0) -> bool:
    """RFC 2889 s. 5.9: no errored frame forwarded, and the valid frames
    forwarded (loss within the tolerance)."""
    return errored_rx == 0 and valid_tx > 0 and forwarding_passed(valid_tx, valid_rx, 0,
                                                                  tolerance_pct)
