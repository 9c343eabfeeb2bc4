"""Write the registry's table of rankers into README.md, between the models markers.

    .venv/bin/python tools/readme_models.py

tests/test_registry.py checks that the README holds exactly this table.
"""

from __future__ import annotations

from pathlib import Path

from ranklearn.registry import markdown_table

START, END = "<!-- models:start -->", "<!-- models:end -->"


def main() -> None:
    readme = Path(__file__).resolve().parents[1] / "README.md"
    text = readme.read_text()
    head, _, rest = text.partition(START)
    _, _, tail = rest.partition(END)
    readme.write_text(f"{head}{START}\n{markdown_table()}\n{END}{tail}")


if __name__ == "__main__":
    main()
