"""Run every benchmark and write benchmarks/RESULTS.md from their own output.

    .venv/bin/python benchmarks/run_all.py [--only quality,speed,...]

Each section holds exactly what its script printed, with the command that regenerates it.
Timings are ratios measured in the same run; the 2-core machines are shared and noisy.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import subprocess
import sys
from importlib import metadata
from pathlib import Path

HERE = Path(__file__).resolve().parent

# The timed sections run first, while nothing else of this script competes for the cores.
SECTIONS = {
    "speed": ("LambdaMART speed against LightGBM (issue 3)", ["bench_speed.py", "--repeats", "3"]),
    "predict": ("LambdaMART prediction against LightGBM on the same trees (issue 15)", ["bench_predict.py"]),
    "memory": ("Peak memory of LambdaMART training against LightGBM (issue 5)", ["bench_memory.py"]),
    "loading": ("Loading LETOR files against scikit-learn (issue 2)", ["bench_loading.py"]),
    "quality": ("LambdaMART quality: MQ2008 5-fold (issue 3)", ["bench_quality.py"]),
    "neural": ("RankNet / LambdaRank: the factorized speed-up and quality (issue 4)", ["bench_neural.py"]),
}
#: hand-written records that RESULTS.md carries after the generated sections
NOTES = ["neural_defaults.md"]


def _load(values: tuple[float, float, float]) -> str:
    return ", ".join(f"{v:.2f}" for v in values)


def versions() -> str:
    out = []
    for pkg in ("ranklearn", "numba", "numpy", "lightgbm", "xgboost-cpu", "torch", "scikit-learn"):
        try:
            out.append(f"{pkg} {metadata.version(pkg)}")
        except metadata.PackageNotFoundError:
            pass
    return ", ".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default=",".join(SECTIONS), help="comma-separated: " + ",".join(SECTIONS))
    ap.add_argument("--out", default=str(HERE / "RESULTS.md"))
    args = ap.parse_args()
    chosen = [s.strip() for s in args.only.split(",") if s.strip()]
    unknown = set(chosen) - set(SECTIONS)
    if unknown:
        sys.exit(f"unknown section(s): {', '.join(sorted(unknown))}")
    parts = [
        "# Benchmark results",
        "",
        f"Generated {datetime.date.today().isoformat()} by `.venv/bin/python benchmarks/run_all.py` on "
        f"{platform.machine()} with {os.cpu_count()} cores (shared, noisy: read ratios, not seconds).",
        f"Versions: {versions()}.",
        "",
    ]
    for key in chosen:
        title, cmd = SECTIONS[key]
        print(f"== {key}: {' '.join(cmd)}", flush=True)
        load_before = os.getloadavg()
        proc = subprocess.run([sys.executable, *cmd], cwd=HERE, capture_output=True, text=True)
        load_after = os.getloadavg()
        sys.stdout.write(proc.stdout)
        parts += [f"## {title}", "", f"Command: `cd benchmarks && ../.venv/bin/python {' '.join(cmd)}`", ""]
        parts += [f"Load average (1, 5, 15 min) before: {_load(load_before)}; after: {_load(load_after)}.", ""]
        if proc.returncode != 0:
            parts += [f"**Failed** (exit {proc.returncode}):", "", "```", proc.stderr.strip()[-2000:], "```", ""]
        else:
            parts += [line for line in proc.stdout.splitlines() if not line.startswith("fold ")] + [""]
    for note in NOTES:
        parts += [(HERE / note).read_text().rstrip(), ""]
    Path(args.out).write_text("\n".join(parts) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
