"""Rerun a sample of the click protocol's saved runs with the code as it is, and compare them per query.

    cd benchmarks && ../.venv/bin/python rerun_saved.py [--sections clicks-protocol-ours,...] [--runs ...]

RESULTS.md's click sections are read back from the runs ``bench_clicks.py --save`` kept in ``out/``
(``--resume``), run over many hours while the code moved on. This reruns a few of those runs with the
current code, each with its section's own flags from ``run_all.SECTIONS``, into a temporary folder, and
says for every row of every rerun whether each test query's NDCG@1/3/5/10 is the same as saved (the
runs are seeded: the same code gives the same values). Exit status 1 when a row differs or is in
one of the two runs only.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from bench_clicks import METRICS, run_file
from run_all import SECTIONS

HERE = Path(__file__).resolve().parent
#: the flags of a section's command that choose its runs, replaced by the sample's
CHOSEN = {"--data", "--clicks", "--sessions", "--seeds", "--folds", "--save", "--join"}
#: click model, sessions, seed, split: the target setting on each dataset, and a small strong-bias run
RUNS = ["pbm1:1000000:0:MQ2008 Fold1", "pbm1:1000000:1:MSLR-sample", "pbm2:10000:2:MQ2008 Fold3"]
CLICK_SECTIONS = [key for key, (_, cmd) in SECTIONS.items() if cmd[0] == "bench_clicks.py"]


def _option(cmd: list[str], name: str) -> str:
    return cmd[cmd.index(name) + 1]


def rerun_command(cmd: list[str], click: str, n_sessions: int, seed: int, split: str, out: Path) -> list[str]:
    """``cmd`` (a section's bench_clicks.py command) for the one run named, saved in ``out``."""
    kept: list[str] = []
    args = iter(cmd[1:])
    for arg in args:
        if arg in CHOSEN:
            next(args)
        elif arg != "--resume":
            kept.append(arg)
    where = ["--data", "mq2008", "--folds", split.split("Fold")[1]] if split.startswith("MQ2008") else ["--data", "mslr"]
    return [cmd[0], *where, "--clicks", click, "--sessions", str(n_sessions), "--seeds", str(seed), *kept,
            "--save", str(out)]  # fmt: skip


def compare(new: dict, saved: dict) -> list[str]:
    """One line per row of ``new``: the same as ``saved`` in every test query, or how it differs."""
    lines = [f"  {name}: saved, but not in the rerun" for name in saved["per_query"] if name not in new["per_query"]]
    for name, values in new["per_query"].items():
        if name not in saved["per_query"]:
            lines.append(f"  {name}: not in the saved run")
            continue
        old = saved["per_query"][name]
        if all(np.array_equal(values[m], old[m]) for m in METRICS):
            lines.append(f"  {name}: the same in all {values['ndcg@10'].size} test queries")
        else:
            moved = np.abs(values["ndcg@10"] - old["ndcg@10"])
            lines.append(f"  {name}: DIFFERS in {np.count_nonzero(moved)} test queries (NDCG@10 by at most "
                         f"{moved.max():.4f}; mean {old['ndcg@10'].mean():.4f} saved, {values['ndcg@10'].mean():.4f} now)")
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sections", default=",".join(CLICK_SECTIONS), help="run_all.py sections (bench_clicks.py ones)")
    ap.add_argument("--runs", default=",".join(RUNS), help="click:sessions:seed:split, comma-separated")
    args = ap.parse_args()
    differs = False
    for key in args.sections.split(","):
        if key not in CLICK_SECTIONS:
            ap.error(f"--sections: {key!r} is not a bench_clicks.py section of run_all.py ({', '.join(CLICK_SECTIONS)})")
        cmd = SECTIONS[key][1]
        saved_dir = HERE / _option(cmd, "--save")
        for spec in args.runs.split(","):
            click, sessions, seed, split = spec.split(":")
            if click not in _option(cmd, "--clicks").split(",") or sessions not in _option(cmd, "--sessions").split(","):
                continue  # a setting the section does not run
            saved_file = run_file(saved_dir, click, int(sessions), int(seed), split)
            if not saved_file.exists():
                print(f"{key} {spec}: no saved run {saved_file}")
                continue
            with tempfile.TemporaryDirectory() as tmp:
                argv = rerun_command(cmd, click, int(sessions), int(seed), split, Path(tmp))
                proc = subprocess.run([sys.executable, *argv], cwd=HERE, capture_output=True, text=True)
                if proc.returncode != 0:
                    sys.exit(f"{key} {spec}: {' '.join(argv)} failed:\n{proc.stderr[-2000:]}")
                new = np.load(run_file(Path(tmp), click, int(sessions), int(seed), split), allow_pickle=True)["run"].item()
            saved = np.load(saved_file, allow_pickle=True)["run"].item()
            lines = compare(new, saved)
            differs |= any("DIFFERS" in line or "not in the" in line for line in lines)
            print(f"{key} {spec} (saved {saved_file.relative_to(HERE)}, rerun in {new['seconds']:.0f} s at load "
                  f"{new['load']:.1f}):", *lines, sep="\n", flush=True)  # fmt: skip
    sys.exit(1 if differs else 0)


if __name__ == "__main__":
    main()
