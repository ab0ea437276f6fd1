"""The fuzz suite's budget: a few examples per test in CI, or a time per test.

    COLLIDE_FUZZ_SECONDS=600 pytest tests/fuzz     each test runs for 600 s (an hour
                                                    for the suite's six timed tests)

Without the variable each test runs CI_EXAMPLES examples once (the suite stays well
under a minute). With it, each test reruns its hypothesis search, each time with a new
random seed, until its time is up, and the examples run are counted.
"""

from __future__ import annotations

import functools
import os
import time
from collections import Counter

from hypothesis import HealthCheck, settings

CI_EXAMPLES = 25
LONG_EXAMPLES = 1000
FUZZ_SECONDS = float(os.environ.get("COLLIDE_FUZZ_SECONDS") or 0)
# Examples run per test, for the summary line printed at the end of a timed run.
EXAMPLES: Counter[str] = Counter()

fuzz_settings = settings(
    max_examples=LONG_EXAMPLES if FUZZ_SECONDS else CI_EXAMPLES,
    deadline=None,
    derandomize=not FUZZ_SECONDS,  # CI runs the same examples every time
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def count(name: str) -> None:
    """Record one example of test `name`."""
    EXAMPLES[name] += 1


def for_budget(test):
    """Run the hypothesis test `test` once, or again and again for FUZZ_SECONDS."""

    @functools.wraps(test)
    def run(*args, **kwargs):
        stop = time.monotonic() + FUZZ_SECONDS
        test(*args, **kwargs)
        while time.monotonic() < stop:
            test(*args, **kwargs)

    return run
