"""The first run says that it compiles; a run with the kernels cached says nothing."""

from __future__ import annotations

import os
import subprocess
import sys

from ranklearn._numba_cache import kernels_cached

NOTE = "compiling kernels, first run only"


def _info(path, cache_dir) -> subprocess.CompletedProcess:
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache_dir)}
    code = "import sys; from ranklearn.cli.main import main; main(sys.argv[1:])"
    return subprocess.run([sys.executable, "-c", code, "info", str(path)], env=env, capture_output=True, text=True,
                          timeout=600)  # fmt: skip


def test_first_run_says_it_compiles_then_not(tmp_path, monkeypatch):
    import ranklearn._numba_cache as cache

    monkeypatch.setattr(cache, "PACKAGE", tmp_path / "nowhere")  # as if nothing was ever compiled in place
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "empty"))
    assert not kernels_cached()
    (tmp_path / "empty" / "x" / "ranklearn" / "metrics").mkdir(parents=True)
    (tmp_path / "empty" / "x" / "ranklearn" / "metrics" / "_kernels.f-1.py311.nbi").write_bytes(b"")
    assert kernels_cached()


def test_the_command_line_says_so_on_stderr(tmp_path):
    data = tmp_path / "d.txt"
    data.write_text("1 qid:1 1:0.5\n0 qid:1 1:0.1\n")
    in_place = kernels_cached()  # kernels compiled next to the sources count as cached for every run
    first = _info(data, tmp_path / "cache")
    assert first.returncode == 0, first.stderr
    assert (NOTE in first.stderr) == (not in_place and not kernels_cached())
    second = _info(data, tmp_path / "cache")
    assert second.returncode == 0 and NOTE not in second.stderr
