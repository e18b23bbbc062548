"""The Flink distribution the real-Flink tests run, found once (`regionchaos.flink.dist.find_dist`: the set-up's
``.flink/<version>`` or ``FLINK_HOME``).

Out: `DIST` (None without one), `WHY_NOT` (why there is none, "" otherwise) and `needs_flink`, the skip marker
that says so.
"""

from __future__ import annotations

import pytest

from regionchaos.flink.dist import FlinkNotInstalled, find_dist

try:
    DIST, WHY_NOT = find_dist(), ""
except FlinkNotInstalled as exc:
    DIST, WHY_NOT = None, str(exc)

needs_flink = pytest.mark.skipif(DIST is None, reason=f"no Flink distribution: {WHY_NOT}")
