"""Clash reports: JSON (the source of truth), HTML, CSV and BCF 2.1, and the report run
that produces them (`run.run_report`, which takes the scene-reading steps as functions).

May import `collide_addon.clash`, `collide_addon.core`, the standard library and numpy
only: never Blender (`blender/report_run.py` drives a run from a Blender scene).

    from collide_addon.report import json_report, html_report, csv_report, bcf_report
"""
