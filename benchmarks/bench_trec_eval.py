"""``ranklearn trec-eval`` against the trec_eval binary: line-for-line output, and speed.

The binary is built from trec_eval's sources with the machine's C compiler (``make``) in a
temporary folder: ``--trec-eval-src`` a source folder, or a git repository of
usnistgov/trec_eval (``--tag``, default v9.0.8, the release pytrec_eval embeds, is exported
with ``git archive``). Not part of CI.

1. Output: generated qrels and runs (score ties, unjudged documents, negative grades, queries
   missing on either side) and tests/data/trec_eval, for ``-q -m all_trec``, ``-c``, ``-M``,
   ``-J``, ``-l 2``, ``-Z``, measure parameters, ``-R qrels``, ``-n``, and generated ``-R prefs``,
   ``qrels_prefs`` and ``qrels_jg`` judgements of the same run (several judgment groups and
   sub-groups, contradicting users, ties of rel_level) with ``-m all_prefs``/``qrels_jg``: the
   two outputs must be byte-identical (trec_eval's ``-Z`` crashes (segmentation fault) for a
   measure absent from the z-file, so the z-file lists every measure asked).
2. Speed: ``--queries`` x ``--docs`` (10,000 x 1,000: a 300 MB run, 5,000,000 qrels lines),
   ``-m all_trec``: trec_eval, ``ranklearn trec-eval`` (a process each, from the files to the
   printed lines) and pytrec_eval (the files read into its dicts by a Python loop, then
   ``RelevanceEvaluator(qrels, {"all_trec"}).evaluate(run)``), interleaved, ``--repeats``
   rounds, medians; the ratio is the other's time / ranklearn's; the 1-minute load average is
   printed after every run. ranklearn's kernels are compiled (and cached) by a first run.

    .venv/bin/python benchmarks/bench_trec_eval.py --trec-eval-src /path/to/trec_eval [--queries 10000] [--docs 1000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from _common import REPO

PYTHON = [sys.executable, "-c", "from ranklearn.cli.main import main; main()", "trec-eval"]
ENV = {**os.environ, "PYTHONPATH": str(REPO / "src")}


def build(source: Path, tag: str, folder: Path) -> Path:
    """trec_eval built from ``source`` (a source folder, or a git repository: ``tag`` exported)."""
    tree = folder / "trec_eval"
    tree.mkdir()
    if (source / "trec_eval.c").exists():
        subprocess.run(["cp", "-r", f"{source}/.", str(tree)], check=True)
    else:
        archive = subprocess.run(["git", "-C", str(source), "archive", tag], check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
    subprocess.run(["make", "-C", str(tree)], check=True, capture_output=True)
    return tree / "trec_eval"


def write_collection(folder: Path, n_queries: int, n_docs: int, seed: int) -> tuple[Path, Path]:
    """Qrels (half of 5 n_docs candidates judged, grades -1..2) and a run (n_docs per query,
    scores with 3 decimals: ties), query 0 judged only, the last query retrieved only."""
    rng = np.random.default_rng(seed)
    qrels, run = folder / f"q{n_queries}x{n_docs}.qrels", folder / f"r{n_queries}x{n_docs}.run"
    with open(qrels, "w") as fq, open(run, "w") as fr:
        for q in range(n_queries):
            judged = rng.choice(5 * n_docs, size=n_docs // 2 + 1, replace=False)
            grades = rng.choice([-1, 0, 0, 0, 1, 2], size=judged.size)
            if q < n_queries - 1:
                fq.write("".join(f"{q} 0 D{d} {g}\n" for d, g in zip(judged, grades)))
            if q > 0:
                docs = rng.choice(5 * n_docs, size=n_docs, replace=False)
                scores = np.round(rng.normal(size=n_docs), 3 if n_docs > 100 else 1)
                fr.write("".join(f"{q} Q0 D{d} {r + 1} {s} run{seed}\n" for r, (d, s) in enumerate(zip(docs, scores))))
    return qrels, run


def outputs_agree(binary: Path, qrels: Path, run: Path, options: list[str]) -> tuple[bool, int, str]:
    theirs = subprocess.run([str(binary), *options, str(qrels), str(run)], capture_output=True, text=True)
    ours = subprocess.run([*PYTHON, *options, str(qrels), str(run)], capture_output=True, text=True, env=ENV)
    same = theirs.returncode == 0 and ours.returncode == 0 and theirs.stdout == ours.stdout
    note = "" if same else f"trec_eval rc {theirs.returncode} {theirs.stderr.strip()[:80]!r}; ours rc {ours.returncode} {ours.stderr.strip()[:80]!r}"
    return same, theirs.stdout.count("\n"), note


def check_outputs(binary: Path, folder: Path) -> bool:
    qrels, run = write_collection(folder, 60, 40, seed=1)
    zfile = folder / "z.txt"
    rng = np.random.default_rng(2)
    zfile.write_text("".join(f"{q} {m} {rng.uniform(0, 0.5):.3f} {rng.choice([0.0, 0.1, 0.2])}\n"
                             for q in range(1, 59) for m in ("map", "P_5")))  # fmt: skip
    data = REPO / "tests" / "data" / "trec_eval"
    cases = [
        [], ["-q", "-m", "all_trec"], ["-q", "-c", "-m", "all_trec"], ["-q", "-M", "7", "-m", "all_trec"],
        ["-q", "-J", "-m", "all_trec"], ["-q", "-l", "2", "-m", "all_trec"], ["-q", "-c", "-M", "3", "-J", "-m", "official"],
        ["-q", "-Z", str(zfile), "-m", "map", "-m", "P.5"], ["-q", "-c", "-Z", str(zfile), "-m", "map"],
        ["-q", "-m", "ndcg.1=3,2=9", "-m", "G.1=0.5", "-m", "Rndcg.2=4", "-m", "ndcg_rel.0=1", "-m", "utility.2,-1,0,1",
         "-N", "1000", "-m", "P.3,200", "-m", "iprec_at_recall.0.25", "-m", "Rprec_mult.0.5,3", "-m", "set_F.0.3"],
        ["-q", "-R", "qrels", "-m", "set"], ["-n", "-q", "-m", "relstring.20", "-m", "gm_map"],
    ]  # fmt: skip
    ok = True
    print("| files | options | lines | identical |\n|---|---|---:|---|")
    ok &= check_format_outputs(binary, folder, run)
    for files in ((qrels, run), (data / "qrels.txt", data / "run.txt")):
        for options in cases:
            same, lines, note = outputs_agree(binary, *files, options)
            ok &= same
            print(f"| {files[1].name} | `{' '.join(o if '/' not in o else Path(o).name for o in options) or '(none)'}` | {lines} | {'yes' if same else 'NO ' + note} |")
    return ok


def write_judgement_formats(folder: Path, n_queries: int, n_docs: int, seed: int) -> dict[str, Path]:
    """prefs, qrels_prefs and qrels_jg judgements of :func:`write_collection`'s documents: per
    query 1-3 judgment groups (users), each with its own hidden grades (so users contradict each
    other) shown in 1-3 sub-groups of documents (one sub-group: equivalence classes; several:
    preferences made transitive), and query 0 not judged."""
    rng = np.random.default_rng(seed)
    paths = {name: folder / f"{name}.txt" for name in ("prefs", "qrels_prefs", "qrels_jg")}
    with open(paths["prefs"], "w") as fp, open(paths["qrels_prefs"], "w") as fq, open(paths["qrels_jg"], "w") as fj:
        for q in range(1, n_queries):
            for jg in range(rng.integers(1, 4)):
                docs = rng.choice(5 * n_docs, size=n_docs // 4, replace=False)
                hidden = rng.choice([0.0, 0.0, 1.0, 2.0, 2.5], size=docs.size)
                fq.write("".join(f"{q} u{jg} D{d} {h}\n" for d, h in zip(docs, hidden)))
                fj.write("".join(f"{q} u{jg} D{d} {int(h) - (i % 7 == 0)}\n" for i, (d, h) in enumerate(zip(docs, hidden))))
                for sub in range(rng.integers(1, 4)):
                    pick = rng.random(docs.size) < 0.6
                    fp.write("".join(f"{q} u{jg} s{sub} D{d} {h}\n" for d, h in zip(docs[pick], hidden[pick])))
    return paths


def check_format_outputs(binary: Path, folder: Path, run: Path) -> bool:
    """The -R prefs / qrels_prefs / qrels_jg outputs of both programs on the generated run."""
    paths = write_judgement_formats(folder, 60, 40, seed=3)
    cases = [
        ("prefs", ["-q", "-R", "prefs", "-m", "all_prefs"]), ("prefs", ["-q", "-c", "-M", "10", "-R", "prefs", "-m", "prefs"]),
        ("qrels_prefs", ["-q", "-R", "qrels_prefs", "-m", "all_prefs"]), ("qrels_jg", ["-q", "-R", "qrels_jg", "-m", "qrels_jg"]),
        ("qrels_jg", ["-q", "-c", "-J", "-l", "2", "-M", "20", "-R", "qrels_jg", "-m", "qrels_jg"]),
    ]  # fmt: skip
    ok = True
    for name, options in cases:
        same, lines, note = outputs_agree(binary, paths[name], run, options)
        ok &= same
        print(f"| {run.name} ({name}.txt) | `{' '.join(options)}` | {lines} | {'yes' if same else 'NO ' + note} |")
    return ok


def pytrec_eval_run(qrels: Path, run: Path) -> float:
    """pytrec_eval from the files: read into dicts by a loop, all_trec, the mean map."""
    import pytrec_eval

    judged: dict = {}
    with open(qrels) as fh:
        for line in fh:
            q, _, d, g = line.split()
            judged.setdefault(q, {})[d] = int(g)
    ranked: dict = {}
    with open(run) as fh:
        for line in fh:
            q, _, d, _, s, _ = line.split()[:6]
            ranked.setdefault(q, {})[d] = float(s)
    values = pytrec_eval.RelevanceEvaluator(judged, {"all_trec"}).evaluate(ranked)
    return float(np.mean([v["map"] for v in values.values()]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trec-eval-src", type=Path, required=True)
    parser.add_argument("--tag", default="v9.0.8")
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--docs", type=int, default=1_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--skip-speed", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        binary = build(args.trec_eval_src, args.tag, folder)
        print(f"trec_eval built from {args.trec_eval_src} ({args.tag}); {os.cpu_count()} CPUs\n")
        if not check_outputs(binary, folder):
            print("\nOUTPUTS DIFFER")
        if args.skip_speed:
            return
        t0 = time.perf_counter()
        qrels, run = write_collection(folder, args.queries, args.docs, seed=0)
        print(f"\n{args.queries:,} x {args.docs:,}: run {run.stat().st_size / 1e6:.0f} MB, qrels {qrels.stat().st_size / 1e6:.0f} MB "
              f"(written in {time.perf_counter() - t0:.0f} s)")  # fmt: skip
        same, lines, note = outputs_agree(binary, qrels, run, ["-m", "all_trec"])  # also ranklearn's first (compiling) run
        print(f"-m all_trec outputs identical: {same} ({lines} lines) {note}")
        commands = {
            "trec_eval": lambda: subprocess.run([str(binary), "-m", "all_trec", str(qrels), str(run)], check=True,
                                                capture_output=True),
            "ranklearn trec-eval": lambda: subprocess.run([*PYTHON, "-m", "all_trec", str(qrels), str(run)], check=True,
                                                          capture_output=True, env=ENV),
            "pytrec_eval": lambda: pytrec_eval_run(qrels, run),
        }  # fmt: skip
        times: dict = {name: [] for name in commands}
        for round_ in range(args.repeats):
            for name, fn in commands.items():
                t = time.perf_counter()
                fn()
                times[name].append(time.perf_counter() - t)
                print(f"  round {round_ + 1} {name}: {times[name][-1]:.1f} s, load {os.getloadavg()[0]:.1f}", flush=True)
        ours = float(np.median(times["ranklearn trec-eval"]))
        print("\n| program | median s | runs s | time / ranklearn's |\n|---|---:|---|---:|")
        for name, values in times.items():
            median = float(np.median(values))
            print(f"| {name} | {median:.1f} | {', '.join(f'{v:.1f}' for v in values)} | {median / ours:.2f} |")


if __name__ == "__main__":
    main()
