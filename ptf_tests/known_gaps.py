"""What a target is known not to do yet, so that the suite can say so.

A test wraps the assertion that needs such a feature in
`with self.known_gap("name"):`. On a target listed here for that gap a
failing assertion skips the test with the reason (PTF prints it); a
passing one fails the test, so that a fixed gap is taken off this list.
On any other target (BMv2 included) the assertion is an ordinary one.
"""

from __future__ import annotations

from typing import Optional

GAPS: dict[str, dict[str, str]] = {
    "p4scope": {
        "selector_hash": "the engine has no action-selector hashing yet: every flow takes "
                         "the first member of an ECMP or LAG group",
    },
}


def reason(target: str, gap: str) -> Optional[str]:
    return GAPS.get(target, {}).get(gap)
