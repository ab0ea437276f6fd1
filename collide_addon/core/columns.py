"""Field-wise operations on dataclasses whose fields are arrays with one row per item."""

from __future__ import annotations

import dataclasses

import numpy as np


def concatenate_fields(cls, parts, build=None):
    """An instance of dataclass `cls` whose every field is the concatenation of that
    field over `parts` (a non-empty list of `cls` instances), in order; made by
    `build(**fields)` when given, else by `cls(**fields)`."""
    return (build or cls)(
        **{
            field.name: np.concatenate([getattr(part, field.name) for part in parts])
            for field in dataclasses.fields(cls)
        }
    )
