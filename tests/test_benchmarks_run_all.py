"""benchmarks/run_all.py: the hand-written records it appends never reuse a generated section's title.

A record titled like a section would be read back as part of that section on the next ``--only``
run (``_existing_sections`` gathers every block under a section's title) and be written twice.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))
run_all = pytest.importorskip("run_all")


def test_no_record_is_titled_like_a_generated_section():
    sections = {title for title, _ in run_all.SECTIONS.values()}
    for note in run_all.NOTES:
        titles = {line[3:] for line in (BENCHMARKS / note).read_text().splitlines() if line.startswith("## ")}
        assert not titles & sections, f"{note}: {sorted(titles & sections)}"


def test_a_rerun_section_replaces_its_block_and_keeps_the_others(tmp_path):
    first, second = (title for title, _ in list(run_all.SECTIONS.values())[:2])
    results = tmp_path / "RESULTS.md"
    results.write_text(f"# Benchmark results\n\n## {first}\n\nold one\n\n## {second}\n\nold two\n\n## A record\n\ntext\n")
    blocks = run_all._existing_sections(results)
    assert blocks[first] == [f"## {first}", "", "old one", ""]
    assert blocks[second] == [f"## {second}", "", "old two", ""]  # the record after it is not part of it
