"""Run every benchmark and write benchmarks/RESULTS.md from their own output.

    .venv/bin/python benchmarks/run_all.py [--only quality,speed,...]

Each section holds exactly what its script printed, with the command that regenerates it.
``--only`` reruns the sections named and keeps the others of the existing RESULTS.md.
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
    "scaling": ("LambdaMART training time as the data grows, against LightGBM (issue 15)",
                ["bench_scaling.py", "--repeats", "3"]),
    "contention": ("Training under load: a fit beside another fit or a torch training (issue 15)",
                   ["bench_contention.py", "--repeats", "3"]),
    "predict": ("LambdaMART prediction against LightGBM on the same trees (issue 15)", ["bench_predict.py"]),
    "coldstart": ("Cold start: first run in a fresh environment, with and without the warm-up (issue 15)",
                  ["bench_coldstart.py"]),
    "startup": ("Start-up: each command's wall time, and the first fit after a plain install (issue 30)",
                ["bench_startup.py", "--repeats", "5"]),
    "memory": ("Peak memory of LambdaMART training against LightGBM (issue 5)", ["bench_memory.py"]),
    "dask": ("DaskLambdaMART: one machine's model, speed against DaskLGBMRanker, scale, communication (issue 13)",
             ["bench_dask.py", "--repeats", "3", "--parts", "same,speed,overhead"]),
    "dask-scale": ("DaskLambdaMART at scale: 2,000,000 rows on 2 workers with 1 GiB each (issue 13)",
                   ["bench_dask.py", "--parts", "scale"]),
    "loading": ("Loading LETOR files against scikit-learn (issue 2)", ["bench_loading.py"]),
    "quality": ("LambdaMART quality: MQ2008 5-fold (issue 3)", ["bench_quality.py"]),
    "neural": ("RankNet / LambdaRank: the factorized speed-up and quality (issue 4)", ["bench_neural.py"]),
    "metrics": ("Metric speed against ranx and pytrec_eval; compare (issue 14)", ["bench_metrics.py"]),
    "rankers": ("Every ranker with its defaults against LightGBM and XGBoost on four datasets (issue 17)",
                ["bench_rankers.py"]),
    # 270 runs (5 click models x 3 session counts x 3 seeds x 6 splits, about 3 hours on 2 cores):
    # --resume goes on from the runs saved by an interrupted or partial run
    "clicks-protocol": ("Learning from clicks: the offline protocol, LightGBM's and XGBoost's debiasing (issue 29)",
                        ["bench_clicks.py", "--data", "mq2008,mslr", "--clicks", "pbm1,pbm0.5,pbm2,cascade,trust",
                         "--sessions", "10000,100000,1000000", "--seeds", "0,1,2", "--rankers", "peers",
                         "--save", "out/protocol_peers", "--resume"]),
    # the same 270 settings with ranklearn's neural click estimators (about 2 hours on 2 cores), then with its
    # debiased LambdaMART (and LightGBM stopped on the IPW click DCG; about 4 hours), beside the saved runs above
    # (--join checks that the references agree per query)
    "clicks-protocol-neural": ("Learning from clicks: the offline protocol with ranklearn's neural click estimators "
                               "(issue 31)",
                               ["bench_clicks.py", "--data", "mq2008,mslr", "--clicks", "pbm1,pbm0.5,pbm2,cascade,trust",
                                "--sessions", "10000,100000,1000000", "--seeds", "0,1,2", "--neural", "only",
                                "--save", "out/protocol_neural", "--resume", "--join", "out/protocol_peers"]),
    "clicks-protocol-ours": ("Learning from clicks: the offline protocol with ranklearn's debiased LambdaMART (issue 31)",
                             ["bench_clicks.py", "--data", "mq2008,mslr", "--clicks", "pbm1,pbm0.5,pbm2,cascade,trust",
                              "--sessions", "10000,100000,1000000", "--seeds", "0,1,2", "--rankers", "ours",
                              "--ipw", "add", "--save", "out/protocol_ours", "--resume",
                              "--join", "out/protocol_peers,out/protocol_neural"]),
    # LambdaMART on the true labels of the shown documents only (a reference; about 10 minutes on 2 cores): the
    # runs the next section joins
    "clicks-shown": ("Learning from clicks: LambdaMART on the true labels of the shown documents (issue 31)",
                     ["bench_clicks.py", "--data", "mq2008,mslr", "--clicks", "pbm1,pbm0.5,pbm2,cascade,trust",
                      "--sessions", "1000000", "--seeds", "0,1,2", "--rankers", "shown", "--save", "out/shown",
                      "--resume"]),
    # the second pre-registered entry (benchmarks/ranker_defaults.md, "A second click entry with smaller trees") at
    # every click model and session count, beside the saved runs above (about 90 minutes on 2 cores)
    "clicks-entry-sizes": ("Learning from clicks: the second entry, 31- or 7-leaf trees chosen on the IPW click DCG "
                           "(issue 31)",
                           ["bench_clicks.py", "--data", "mq2008,mslr", "--clicks", "pbm1,pbm0.5,pbm2,cascade,trust",
                            "--sessions", "10000,100000,1000000",
                            "--seeds", "0,1,2", "--ipw", "sizes", "--save", "out/ipw_sizes", "--resume",
                            "--join", "out/protocol_ours,out/protocol_peers,out/protocol_neural,out/shown"]),
    # the third pre-registered entry (benchmarks/ranker_defaults.md, "A third click entry"): LambdaMART on every
    # candidate document labelled by its IPW relevance estimate, and its naive reference, at every click model,
    # 10^6 sessions, beside the saved runs above (about 25 minutes on 2 cores)
    "clicks-candidates": ("Learning from clicks: the third entry, IPW relevance labels over each query's candidates "
                          "(issue 31)",
                          ["bench_clicks.py", "--data", "mq2008,mslr", "--clicks", "pbm1,pbm0.5,pbm2,cascade,trust",
                           "--sessions", "1000000", "--seeds", "0,1,2", "--ipw", "candidates", "--save", "out/ipw_candidates", "--resume",
                           "--join", "out/ipw_sizes,out/protocol_ours,out/protocol_peers,out/protocol_neural,out/shown"]),
}
#: hand-written records that RESULTS.md carries after the generated sections
NOTES = ["core_refactor_ab.md", "boosting_step_ab.md", "neural_defaults.md", "ranker_defaults.md",
         "clicks_simulation.md", "trec_eval_dropin.md", "habits_warmup.md", "explain_speed.md",
         "unbiased_speed.md", "spark_speed.md", "neural_clicks.md", "vocabulary_ab.md", "clicks_protocol_peers.md",
         "clicks_protocol.md",
         "startup.md", "clicks_debiased_stopping.md", "clicks_dask.md", "clicks_protocol_ours.md", "clicks_entry_sizes.md",
         "clicks_shown_labels.md", "clicks_candidates.md", "clicks_rerun.md"]


def _existing_sections(path: Path) -> dict[str, list[str]]:
    """The generated sections of an existing RESULTS.md by title (``--only`` keeps the others)."""
    if not path.exists():
        return {}
    titles = {title for title, _ in SECTIONS.values()}
    blocks: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in path.read_text().splitlines():
        if line.startswith("## "):
            current = blocks.setdefault(line[3:], []) if line[3:] in titles else None
        if current is not None:
            current.append(line)
    return blocks


def _load(values: tuple[float, float, float]) -> str:
    return ", ".join(f"{v:.2f}" for v in values)


def versions() -> str:
    out = []
    for pkg in ("ranklearn", "numba", "numpy", "lightgbm", "xgboost-cpu", "torch", "scikit-learn", "ranx",
                "pytrec-eval-terrier", "dask", "distributed"):
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
    blocks = _existing_sections(Path(args.out)) if set(chosen) != set(SECTIONS) else {}
    for key in chosen:
        title, cmd = SECTIONS[key]
        print(f"== {key}: {' '.join(cmd)}", flush=True)
        load_before = os.getloadavg()
        proc = subprocess.run([sys.executable, *cmd], cwd=HERE, capture_output=True, text=True)
        load_after = os.getloadavg()
        sys.stdout.write(proc.stdout)
        block = [f"## {title}", "", f"Command: `cd benchmarks && ../.venv/bin/python {' '.join(cmd)}`", ""]
        block += [f"Measured {datetime.date.today().isoformat()}. Load average (1, 5, 15 min) before: "
                  f"{_load(load_before)}; after: {_load(load_after)}.", ""]  # fmt: skip
        if proc.returncode != 0:
            block += [f"**Failed** (exit {proc.returncode}):", "", "```", proc.stderr.strip()[-2000:], "```", ""]
        else:
            block += [line for line in proc.stdout.splitlines() if not line.startswith("fold ")] + [""]
        blocks[title] = block
    parts = [
        "# Benchmark results",
        "",
        f"Generated by `.venv/bin/python benchmarks/run_all.py [--only SECTIONS]` on {platform.machine()} with "
        f"{os.cpu_count()} cores (shared, noisy: read ratios, not seconds); each section says when it was measured.",
        f"Versions: {versions()}.",
        "",
    ]
    for title, _ in SECTIONS.values():
        parts += blocks.get(title, [])
    for note in NOTES:
        parts += [(HERE / note).read_text().rstrip(), ""]
    Path(args.out).write_text("\n".join(parts) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
