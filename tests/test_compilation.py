"""The first run says that it compiles the kernels (at a terminal at once; in a pipe once the inputs are read);
a run that loads them from the cache says nothing."""

from __future__ import annotations

import os
import pty
import subprocess
import sys

NOTE = "compiling kernels, first run only"
CODE = "import sys; from ranklearn.cli.main import main; main(sys.argv[1:])"


def _at_a_terminal(args, cache_dir) -> tuple[int, str]:
    """Run ``ranklearn ARGS`` with stderr on a pseudo-terminal and an empty numba cache (a fresh install)."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache_dir)}
    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-c", CODE, *map(str, args)], env=env, stdout=subprocess.DEVNULL,
                            stderr=slave)  # fmt: skip
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 4096)
        except OSError:  # the terminal closed: the process is done writing
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    return proc.wait(timeout=600), b"".join(chunks).decode(errors="replace")


def _evaluate_compiling(tmp_path) -> list:
    """``evaluate`` of a run with more documents than the metric kernel interprets in a process
    without numba (ranklearn._compilation): the kernel compiles (a file that small is parsed interpreted)."""
    from ranklearn.metrics.kernels import INTERPRETED_DOCS

    data, scores = tmp_path / "d.txt", tmp_path / "s.txt"
    n = INTERPRETED_DOCS + 1
    data.write_text("".join(f"{i % 2} qid:{i // 50} 1:0.5\n" for i in range(n)))
    scores.write_text("".join(f"{i % 7}\n" for i in range(n)))
    return ["evaluate", "--data", data, "--scores", scores]


def test_first_run_says_it_compiles_and_the_next_does_not(tmp_path):
    args = _evaluate_compiling(tmp_path)
    code, err = _at_a_terminal(args, tmp_path / "cache")
    assert code == 0, err
    assert err.count(NOTE) == 1  # once, however many kernels
    code, err = _at_a_terminal(args, tmp_path / "cache")
    assert code == 0 and NOTE not in err


def test_an_error_before_any_compilation_stays_one_line(tmp_path):
    code, err = _at_a_terminal(["info", tmp_path / "missing.txt"], tmp_path / "cache")
    assert code == 2 and NOTE not in err and err.strip().count("\n") == 0


def _in_a_pipe(args, cache_dir) -> subprocess.CompletedProcess:
    """Run ``ranklearn ARGS`` with stderr on a pipe (a log, a notebook) and the numba cache ``cache_dir``."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache_dir)}
    return subprocess.run([sys.executable, "-c", CODE, *map(str, args)], env=env, capture_output=True, text=True,
                          timeout=600)  # fmt: skip


def test_in_a_pipe_the_note_comes_once_the_inputs_are_read(tmp_path):
    out = _in_a_pipe(_evaluate_compiling(tmp_path), tmp_path / "cache")
    assert out.returncode == 0 and out.stderr.count(NOTE) == 1, out.stderr  # the metric kernels compile
    assert out.stderr.index(NOTE) == len("ranklearn: ")  # the first line


def test_in_a_pipe_loading_data_says_nothing_and_a_bad_file_stays_one_line(tmp_path):
    good, bad = tmp_path / "good.txt", tmp_path / "bad.txt"
    good.write_text("1 qid:1 1:0.5\n0 qid:1 1:0.1\n")
    bad.write_text("1 qid:1 1:0.5\n0 qid:1 0:0.1\n")
    out = _in_a_pipe(["info", good], tmp_path / "cache")
    assert out.returncode == 0 and NOTE not in out.stderr
    fresh = _in_a_pipe(["info", bad], tmp_path / "fresh")  # the parser compiles, then finds the bad line
    assert fresh.returncode == 2 and NOTE not in fresh.stderr, fresh.stderr
    assert fresh.stderr.startswith("ranklearn: error: ") and fresh.stderr.count("\n") == 1
    assert f"{bad}:2:" in fresh.stderr


V3 = frozenset("cx16 lahf_lm popcnt sse4_1 sse4_2 ssse3 avx avx2 bmi1 bmi2 f16c fma abm movbe xsave".split())


def test_the_portable_cpu_level_is_chosen_when_the_cpu_has_it(monkeypatch):
    from ranklearn import _compilation

    monkeypatch.delitem(sys.modules, "numba", raising=False)  # as before numba is imported
    monkeypatch.setattr(os, "uname", lambda: os.uname_result(("Linux", "h", "6", "#1", "x86_64")))
    env: dict[str, str] = {}
    assert _compilation.select_cpu_target(env, flags=V3 | {"avx512f"}) is True
    assert env == {"NUMBA_CPU_NAME": "x86-64-v3", "NUMBA_CPU_FEATURES": ""}
    assert _compilation.select_cpu_target({}, flags=V3 - {"avx2"}) is False  # an older CPU: numba's own choice
    for mine in ({"NUMBA_CPU_NAME": "host"}, {"NUMBA_CPU_FEATURES": "+avx2"}):  # the user's choice stands
        env = dict(mine)
        assert _compilation.select_cpu_target(env, flags=V3) is False and env == mine
    monkeypatch.setattr(os, "uname", lambda: os.uname_result(("Linux", "h", "6", "#1", "aarch64")))
    assert _compilation.select_cpu_target({}, flags=V3) is False


def test_numba_imported_first_keeps_its_cpu_and_ranklearn_first_sets_the_level():
    """numba keeps the CPU its first compile chose: set later, the level would label code it does not describe."""
    code = "import os, sys\n{}\nimport ranklearn\nprint(os.environ.get('NUMBA_CPU_NAME'))"
    env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_CPU")}
    after = subprocess.run([sys.executable, "-c", code.format("import numba")], env=env, capture_output=True, text=True)
    assert after.stdout.split() == ["None"], after.stderr
    first = subprocess.run([sys.executable, "-c", code.format("")], env=env, capture_output=True, text=True)
    from ranklearn._compilation import PORTABLE_CPU_FLAGS, _cpu_flags

    expected = "x86-64-v3" if os.uname().machine == "x86_64" and PORTABLE_CPU_FLAGS <= _cpu_flags() else "None"
    assert first.stdout.split() == [expected], first.stderr


def test_the_compile_note_waits_for_numba_without_importing_it():
    """The listener is registered when numba is imported (by anyone), not before; the note itself is
    tested end to end above (a fresh cache: once)."""
    code = (
        "import sys\nfrom ranklearn._compilation import on_first_compile\n"
        "on_first_compile(lambda: None)\nprint('numba' in sys.modules)\n"
        "from numba.core import event\nprint(len(event._registered['numba:compile']))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.split() == ["False", "1"], out.stderr
