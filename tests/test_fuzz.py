"""Fuzzing the loader and ``ranklearn info`` with mutated LETOR lines (bounded and seeded for CI).

The mutators live in ``tools/fuzz_loader.py``, which also runs long campaigns
(``python tools/fuzz_loader.py --cases 100000 --seed 1``). Lines come from
``../shared/data/MQ2008/Fold1/train.txt`` when it is there, else from a built-in sample in
the same layout; the built-in sample is fuzzed in every run so the test never depends on
the shared data.
"""

from __future__ import annotations

import importlib.util
import random
import sys
from pathlib import Path

import pytest

from ranklearn.cli.main import main

_TOOL = Path(__file__).resolve().parents[1] / "tools" / "fuzz_loader.py"
_spec = importlib.util.spec_from_file_location("fuzz_loader", _TOOL)
fuzz_loader = importlib.util.module_from_spec(_spec)
sys.modules["fuzz_loader"] = fuzz_loader
_spec.loader.exec_module(fuzz_loader)

LOADER_CASES = 300
CLI_CASES = 50


@pytest.fixture(scope="module")
def real_lines(shared_data):
    return fuzz_loader.sample_lines(shared_data / "MQ2008" / "Fold1" / "train.txt")


def _run_loader_cases(lines, seed, cases, tmp_path):
    rng = random.Random(seed)
    outcomes = {"ok": 0, "DataFormatError": 0}
    for case in range(cases):
        data, names, options = fuzz_loader.make_case(lines, rng)
        try:
            outcomes[fuzz_loader.run_case(data, options, tmp_path, as_file=case % 3 == 0)] += 1
        except Exception as exc:  # anything but DataFormatError is a bug: show a reproducer
            pytest.fail(f"case {case} (mutators {names}, options {options}) raised {type(exc).__name__}: {exc}\n"
                        f"input: {data[:400]!r}")  # fmt: skip
    # the mutations must exercise both outcomes, or the test has gone blind
    assert outcomes["ok"] > cases // 20 and outcomes["DataFormatError"] > cases // 4, outcomes
    return outcomes


def test_fuzz_loader_on_real_lines(real_lines, tmp_path):
    _run_loader_cases(real_lines, seed=20240501, cases=LOADER_CASES, tmp_path=tmp_path)


def test_fuzz_loader_on_builtin_sample(tmp_path):
    _run_loader_cases(list(fuzz_loader.FALLBACK_SAMPLE), seed=7, cases=LOADER_CASES // 2, tmp_path=tmp_path)


def test_builtin_sample_is_valid_letor(tmp_path):
    from ranklearn.data import load_svmlight

    path = tmp_path / "sample.txt"
    path.write_bytes(b"\n".join(fuzz_loader.FALLBACK_SAMPLE) + b"\n")
    ds = load_svmlight(path)
    assert ds.n_features == 46 and ds.n_queries == 4 and ds.comments is not None


@pytest.mark.parametrize("name", sorted(fuzz_loader.MUTATORS))
def test_every_mutator_changes_its_input_and_is_deterministic(name):
    data = b"\n".join(fuzz_loader.FALLBACK_SAMPLE[:3]) + b"\n"
    mutator = fuzz_loader.MUTATORS[name]
    outputs = [mutator(data, random.Random(seed)) for seed in range(20)]
    assert any(out != data for out in outputs)
    assert outputs == [mutator(data, random.Random(seed)) for seed in range(20)]


def test_fuzz_cli_info(capsys, tmp_path):
    lines = fuzz_loader.sample_lines()
    rng = random.Random(99)
    codes = {0: 0, 2: 0}
    for case in range(CLI_CASES):
        data, names, _ = fuzz_loader.make_case(lines, rng)
        path = tmp_path / f"case{case}.txt"
        path.write_bytes(data)
        try:
            main(["info", str(path)])
            code = 0
        except SystemExit as exc:
            code = 0 if exc.code is None else exc.code
        out = capsys.readouterr()
        assert code in (0, 2), (case, names, code, out.err, data[:300])
        if code == 2:
            assert out.err.startswith("ranklearn: error: ") and out.err.count("\n") == 1, (names, out.err)
            assert "Traceback" not in out.err
        else:  # at most the one-line warning that reappearing qids were merged
            assert out.err == "" or (out.err.startswith("ranklearn: warning: ") and out.err.count("\n") == 1), (
                names, out.err)
            assert "rows" in out.out, (names, out.err)
        codes[code] += 1
    assert codes[0] > 0 and codes[2] > 0, codes


def test_tool_summary(tmp_path, capsys):
    status = fuzz_loader.main(["--cases", "40", "--seed", "3", "--out", str(tmp_path / "failures"), "--fallback"])
    out = capsys.readouterr().out
    assert status == 0, out
    assert "40 cases" in out and "other exceptions: 0" in out
    assert not (tmp_path / "failures").exists()
