"""Compile ranklearn's kernels into the package's own ``__pycache__`` before a wheel is built.

``pip install`` of a wheel built after this starts at once: the first fit loads the kernels
instead of compiling them for a minute. They are compiled for the portable CPU level
``x86-64-v3`` (:func:`ranklearn._compilation.select_cpu_target`), so they load on any x86-64
Linux machine with AVX2 with the same Python and numba versions (a wheel is built per Python
version; numba is pinned by the wheel's requirement); elsewhere numba compiles them on first use
as before. Run it on the package tree the wheel is made from (about a minute on 2 cores, 5 MiB):

    python tools/build_kernel_cache.py [--package src/ranklearn] [--jobs 2]
    python -m build --wheel

The cache files (``*.nbi``, ``*.nbc``) are package data (pyproject.toml) and ignored by git.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--package", type=Path, default=REPO / "src" / "ranklearn", help="the ranklearn package folder")
    ap.add_argument("--jobs", type=int, default=2, help="processes to compile in")
    args = ap.parse_args()
    package = args.package.resolve()
    # numba writes next to the sources only when no NUMBA_CACHE_DIR sends it elsewhere; the CPU
    # level is ranklearn's own choice, not one set in this shell
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "NUMBA_CPU_NAME", "NUMBA_CPU_FEATURES")}
    env["PYTHONPATH"] = str(package.parent)
    check = ("import os, ranklearn, ranklearn._compilation as c; "
             "print(ranklearn.__file__, os.environ.get('NUMBA_CPU_NAME'), c.PORTABLE_CPU)")
    where, cpu, portable = subprocess.run([sys.executable, "-c", check], env=env, capture_output=True, text=True,
                                check=True).stdout.split()  # fmt: skip
    if Path(where).parent != package:
        sys.exit(f"build_kernel_cache: {package} is not the ranklearn that Python imports ({where})")
    if cpu != portable:
        sys.exit(f"build_kernel_cache: this machine's CPU lacks {portable}: kernels built here would load nowhere else")
    subprocess.run([sys.executable, "-m", "ranklearn.warmup", str(args.jobs)], env=env, check=True)
    files = list(package.rglob("__pycache__/*.nb[ic]"))
    print(f"build_kernel_cache: {len(files)} cache files, {sum(f.stat().st_size for f in files) / 2**20:.1f} MiB "
          f"for {portable} in {package}")


if __name__ == "__main__":
    main()
