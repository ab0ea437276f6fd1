"""Tolerances, shape kinds and the cube-corner table, named once for the whole core."""

import numpy as np

KIND_BOX = 0
KIND_SPHERE = 1
KIND_CAPSULE = 2
KIND_NAMES = ("box", "sphere", "capsule")

# |R^T R - I| above this rejects a rotation as not orthonormal. Blender's float32
# matrices orthonormalised in float64 stay far below it; a scaled or sheared matrix
# is far above it.
ORTHONORMAL_TOLERANCE = 1e-6

# A cross product of two unit edge directions no longer than this is treated as
# parallel edges: the SAT axis it would give is skipped. That axis' separation, if
# computed, errs by up to about 1.2e-15 / |cross| times the pair's size (the rounding of
# float64 orthonormal frames, measured against long double), either way, so it could
# hide a contact; skipping it errs only towards contact, by at most |cross| times a
# half-extent (the proof is at its use in `box_pairs.separations`). 1e-7 keeps the
# first under 1.2e-8 of the size and the second at the 1e-7 that float32 input carries.
PARALLEL_CROSS_NORM = 1e-7

# Vertex sets whose vertices' offsets from their first vertex agree to within this
# fraction of their largest |coordinate| are copies of one shape moved by a translation:
# float32 storage rounds a vertex by at most 6e-8 of it, so copies of one element
# anywhere agree, and sets this close are one shape as far as float32 coordinates can
# tell (`fit.translated_copies`). Fits and prepared meshes (`mesh.PreparedMeshes`) of
# copies are made once.
COPY_TOLERANCE = 1e-6

# Pairs are processed in chunks of this many so that the temporary arrays of the
# narrow phase stay within a few hundred MiB whatever the number of pairs.
PAIR_CHUNK = 4096

# Core gaps below this times (1 + coordinate magnitude) are rounding noise on
# touching cores: their direction is noise too, so they are handled as contact
# (normal from the contact's geometry, not from the noise).
TOUCH_TOLERANCE = 1e-12

# A normal taken from the cross product of two segment directions is trusted only when
# |cross| >= this times their lengths: below it the product's rounding (1e-16 / |cross|)
# tilts the normal more than the segments' own angle does, and a perpendicular of one
# segment (off by at most that angle) is the better normal. 1e-8 = sqrt(float64 eps)
# balances the two, keeping either tilt under 1e-8 rad.
TRUSTED_CROSS_NORM = 1e-8

# The 8 corners of the cube [-1, 1]^3, x slowest and z fastest: (8, 3) float64. A box's
# corners are its centre plus its rotation times CUBE_CORNER_SIGNS * half_extents.
CUBE_CORNER_SIGNS = np.array(
    [[x, y, z] for x in (-1.0, 1.0) for y in (-1.0, 1.0) for z in (-1.0, 1.0)]
)
CUBE_CORNER_SIGNS.setflags(write=False)
