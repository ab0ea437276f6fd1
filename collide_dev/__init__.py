"""Development helpers for the tests and the benchmarks, never shipped in the add-on zip.

- `synthetic`: seeded synthetic scenes of mixed shapes (numpy only).
- `coal_oracle`: the same shapes as coal objects, the independent oracle (needs coal).

May import `collide_addon.core`; nothing in `collide_addon` imports this package.
"""
