"""Hypothesis settings: CI runs a fixed, derandomized search so that a green run stays
green; local runs explore fresh examples (and keep failures in .hypothesis/)."""

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")
