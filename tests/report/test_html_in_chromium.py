"""The HTML report's Content-Security-Policy as a browser applies it: Debian's chromium,
headless, loads the report and logs every CSP violation to stderr. The report's own
script and style sheet must pass (a hash that no longer matches their text would
silently turn off sorting and styling), and markup that slipped past the escaping must
not run."""

from __future__ import annotations

import copy
import re
import shutil
import subprocess

import pytest

from collide_addon.report.html_report import html_text
from tests.report.sample_report import PNG

# The console message chromium logs for anything the policy blocks.
VIOLATION = re.compile(r"violates the following Content Security Policy directive")


@pytest.fixture(scope="module")
def chromium() -> str:
    path = shutil.which("chromium")
    # No skip: build.py installs chromium; a machine without it fails this test.
    assert path, "chromium is not installed (python3 build.py setup installs it as root)"
    return path


def load_in_chromium(chromium: str, page, *options: str) -> tuple[str, list[str]]:
    """(the DOM after scripts ran, the CSP violation messages) of the page file, with
    chromium's further command line `options`."""
    result = subprocess.run(
        [
            chromium,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--enable-logging=stderr",
            "--v=0",
            *options,
            "--dump-dom",
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    violations = [line for line in result.stderr.splitlines() if VIOLATION.search(line)]
    return result.stdout, violations


def test_the_reports_own_script_and_style_pass_its_policy(chromium, report, tmp_path):
    page = tmp_path / "report.html"
    page.write_text(html_text(report, thumbnails={report["clashes"][0]["id"]: PNG}))
    dom, violations = load_in_chromium(chromium, page)
    assert "<table" in dom
    assert violations == []


def test_markup_that_slipped_past_the_escaping_does_not_run(chromium, report, tmp_path):
    text = html_text(report)
    injected = (
        '<script>document.title = "injected script ran"</script>'
        "<img src=x onerror=\"document.title = 'injected handler ran'\">"
    )
    page = tmp_path / "tampered.html"
    page.write_text(text.replace("<body>", "<body>" + injected, 1))
    dom, violations = load_in_chromium(chromium, page)
    assert "ran</title>" not in dom
    assert any("inline script" in line for line in violations)
    assert any("inline event handler" in line for line in violations)
    assert any("img-src" in line for line in violations)


def test_the_clash_table_fits_a_laptop_window_with_ifc_names(chromium, report, tmp_path):
    # Two IFC GlobalIds and the clash id, words with nowhere to break, made the table
    # wider than a 1366-pixel window: the FZK-Haus report's ids were off screen. They
    # now break where the table needs the room.
    named = copy.deepcopy(report)
    for clash in named["clashes"]:
        clash["test"] = "intersection"
        clash["a"], clash["b"] = "2RGlQk4xH47RHK93zcTzUL", "38a9vdh9bF5Qg28GWyHhlr"
    # And names that break only at their punctuation (the demo's).
    named["clashes"][0]["a"], named["clashes"][0]["b"] = "Pipe.Through.Wall", "Column.B"
    text = html_text(named, thumbnails={clash["id"]: PNG for clash in named["clashes"]})
    # Measured by a script of the test's own, so the page's policy is taken out.
    text, removed = re.subn(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", text)
    assert removed == 1
    probe = "<script>document.title = 'width ' + document.documentElement.scrollWidth</script>"
    page = tmp_path / "named.html"
    page.write_text(text.replace("</body>", probe + "</body>", 1))
    dom, _ = load_in_chromium(chromium, page, "--window-size=1366,768")
    width = int(re.search(r"<title>width (\d+)</title>", dom).group(1))
    assert width <= 1366
