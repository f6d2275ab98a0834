"""What a target is known not to do yet, so that the suite can say so.

A test wraps the assertion that needs such a feature in
`with self.known_gap("name"):`. On a target listed here for that gap a
failing assertion skips the test with the reason (PTF prints it). A gap
that always shows (`always`) must keep failing: a pass then fails the
test, so that a fixed gap is taken off this list. A gap that shows only
sometimes (the outcome depends on timing) lets a pass stand. On any
other target (BMv2 included) the assertion is an ordinary one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional


@dataclass(frozen=True)
class Gap:
    reason: str
    always: bool = True


GAPS: dict[str, dict[str, Gap]] = {
    "p4scope": {},
}


def gap(target: str, name: str) -> Optional[Gap]:
    return GAPS.get(target, {}).get(name)
