"""Write the registry's table of rankers into README.md, between the models markers, and the
table of other tools' names for the parameters between the names markers.

    .venv/bin/python tools/readme_models.py

tests/test_registry.py and tests/test_foreign_names.py check that the README holds exactly these tables.
"""

from __future__ import annotations

from pathlib import Path

from ranklearn.registry import markdown_table, names_markdown_table

BLOCKS = {"models": markdown_table, "names": names_markdown_table}


def main() -> None:
    readme = Path(__file__).resolve().parents[1] / "README.md"
    text = readme.read_text()
    for name, table in BLOCKS.items():
        start, end = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
        head, _, rest = text.partition(start)
        _, _, tail = rest.partition(end)
        text = f"{head}{start}\n{table()}\n{end}{tail}"
    readme.write_text(text)


if __name__ == "__main__":
    main()
