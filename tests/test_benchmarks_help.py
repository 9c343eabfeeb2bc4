"""Every benchmark script answers ``--help``.

argparse formats each option's help with ``%``, so a literal ``%`` in a help string (say, an
f-string's ``{share:.0%}``) makes ``--help`` crash instead of printing the options.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
SCRIPTS = sorted(p.name for p in BENCHMARKS.glob("*.py") if "argparse" in p.read_text())


def test_the_scripts_are_found():
    assert "bench_clicks.py" in SCRIPTS and "run_all.py" in SCRIPTS


@pytest.mark.parametrize("script", SCRIPTS)
def test_help_prints_the_options(script):
    done = subprocess.run([sys.executable, script, "--help"], cwd=BENCHMARKS, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "usage:" in done.stdout
