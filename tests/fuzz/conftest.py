"""Prints how many examples each fuzz test ran (see budget.py)."""

from tests.fuzz.budget import EXAMPLES, FUZZ_SECONDS


def pytest_terminal_summary(terminalreporter):
    if EXAMPLES:
        total = sum(EXAMPLES.values())
        terminalreporter.write_line(
            f"fuzz: {total} examples in {len(EXAMPLES)} tests "
            f"({FUZZ_SECONDS:g} s each; 0 = the CI budget)"
        )
        for name, examples in sorted(EXAMPLES.items()):
            terminalreporter.write_line(f"fuzz:   {name}: {examples}")
