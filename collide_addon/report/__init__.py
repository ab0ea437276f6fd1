"""Clash reports: JSON (the source of truth), HTML, CSV and BCF 2.1. No Blender here.

from collide_addon.report import json_report, html_report, csv_report, bcf_report
"""
