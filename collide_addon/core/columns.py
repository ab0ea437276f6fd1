"""Field-wise operations on dataclasses whose fields are arrays with one row per item."""

from __future__ import annotations

import dataclasses

import numpy as np


def concatenate_fields(cls, parts):
    """An instance of dataclass `cls` whose every field is the concatenation of that
    field over `parts` (a non-empty list of `cls` instances), in order."""
    return cls(
        **{
            field.name: np.concatenate([getattr(part, field.name) for part in parts])
            for field in dataclasses.fields(cls)
        }
    )
