"""Suite-wide settings.

- Hypothesis: CI runs a fixed, derandomized search so that a green run stays green;
  local runs explore fresh examples (and keep failures in .hypothesis/).
- A skipped test is a missing test: any skip fails the run.
"""

import os

import pytest
from hypothesis import settings

settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session, exitstatus):
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    skipped = len(reporter.stats.get("skipped", [])) if reporter else 0
    if skipped and exitstatus == pytest.ExitCode.OK:
        reporter.write_line(f"{skipped} test(s) skipped: a skipped test is a missing test")
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
