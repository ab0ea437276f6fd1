"""Building blocks shared by the clash tests."""

from __future__ import annotations

import numpy as np

from collide_addon.clash.evaluate import PENETRATING, FrameHits


def make_hits(rows):
    """rows: (frame, a, b, distance)."""
    count = len(rows)
    return FrameHits(
        frames=np.array([row[0] for row in rows], dtype=np.int64),
        names=np.array([[row[1], row[2]] for row in rows], dtype=object).reshape(-1, 2),
        kinds=np.zeros((count, 2), dtype=np.int8),
        distances=np.array([row[3] for row in rows], dtype=np.float64),
        points=np.array([[row[0], 0.0, 0.0] for row in rows]).reshape(-1, 3),
        witnesses=np.array([[[row[0], 0.0, 0.0]] * 2 for row in rows]).reshape(-1, 2, 3),
        bounds=np.zeros((count, 2, 3)),
        on_mesh=np.zeros(count, dtype=bool),
        relations=np.full(count, PENETRATING, dtype=np.int8),
        tois=np.full(count, np.nan),
        open_mesh_names=np.zeros(0, dtype=object),
        unswept_names=np.zeros((0, 2), dtype=object),
    )
