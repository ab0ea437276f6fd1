"""The sample report as a fixture for every report test."""

import pytest

from tests.report.sample_report import make_report


@pytest.fixture
def report():
    return make_report()
