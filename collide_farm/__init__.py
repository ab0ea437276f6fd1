"""collide_farm: clash scans split into frame chunks, each a `blender -b` run of
blender_scripts/clash_report.py on a Dask worker, merged into one report; the `collide`
command (cli.py).

The layer above collide_addon.report: it may import collide_addon.clash and
collide_addon.report, never collide_addon.blender or bpy. It runs in a normal Python
(>= 3.11, the `farm` extra for dask and distributed) outside Blender and is not part of
the add-on zip.
"""
