"""Fuzz ``ranklearn.data.load_svmlight`` with mutated LETOR lines.

Each case takes a few real lines (``../shared/data/MQ2008/Fold1/train.txt`` when present,
else a small built-in sample in the same layout), applies one to three mutators (random
bytes, truncation, huge numbers, non-ASCII, shuffled tokens, duplicated lines, CRLF/LF/CR
mixes, NUL bytes, ...) and loads the result with a random choice of loader options. The
loader may succeed or raise ``DataFormatError``; anything else is a bug, and its input is
written to ``--out`` so that it can be replayed::

    python tools/fuzz_loader.py --cases 10000 --seed 0
    python tools/fuzz_loader.py --replay fuzz-failures/case-123.bin

A successful load is also checked: consistent shapes, finite labels, no inf in ``X``, and
(when ``save_svmlight`` accepts the dataset) an exact save/load round trip.

``tests/test_fuzz.py`` imports the mutators from here and runs a bounded, seeded number of
cases in CI.
"""

from __future__ import annotations

import argparse
import gzip
import io
import random
import sys
import tempfile
import time
import traceback
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import numpy as np

REAL_SAMPLE = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "MQ2008" / "Fold1" / "train.txt"

#: Made-up lines in MQ2008's layout (46 features, '#docid = ... inc = ... prob = ...' comments),
#: used when the shared data is absent. Not copied from any data set.
FALLBACK_SAMPLE: list[bytes] = [
    (
        f"{label} qid:{qid} "
        + " ".join(f"{f}:{((qid * 7919 + doc * 104729 + f * 31) % 1000003) / 1000003:.6f}" for f in range(1, 47))
        + f" #docid = GX{qid % 97:03d}-{doc:02d}-{qid * 13 + doc} inc = {doc / 7:.4g} prob = {0.01 * (doc + 1):.6f}"
    ).encode()
    for qid, doc, label in [
        (10002, 0, 0), (10002, 1, 0), (10002, 2, 1), (10002, 3, 2), (10002, 4, 0),
        (10032, 0, 1), (10032, 1, 0), (10032, 2, 0), (10032, 3, 0),
        (10039, 0, 0), (10039, 1, 0), (10039, 2, 0),
        (10048, 0, 2), (10048, 1, 1), (10048, 2, 0), (10048, 3, 1), (10048, 4, 0), (10048, 5, 0),
    ]
]  # fmt: skip


def sample_lines(path: Path | None = REAL_SAMPLE, limit: int = 400) -> list[bytes]:
    """The first ``limit`` lines of the real training file, or the built-in sample."""
    if path is not None and path.is_file():
        with open(path, "rb") as fh:
            lines = [fh.readline().rstrip(b"\r\n") for _ in range(limit)]
        lines = [line for line in lines if line]
        if lines:
            return lines
    return list(FALLBACK_SAMPLE)


# ------------------------------------------------------------------------------- mutators
# Each mutator maps (bytes, rng) -> bytes.

_HUGE = [
    b"1e400", b"-1e400", b"1e-400", b"9" * 400, b"0." + b"0" * 400 + b"1", b"1" + b"0" * 30,
    b"3.4028235e38", b"3.4028236e38", b"-3.5e38", b"1.7976931348623157e308", b"2e308",
    b"99999999999999999999", b"18446744073709551616", b"9223372036854775808", b"-9223372036854775809",
    b"1e99999999999999999999", b"4.9e-324", b"2.5e-324", b"0x1p3", b"1_000", b"nan", b"NaN", b"-nan",
    b"inf", b"-Infinity", b"+.5", b"-.e1", b".", b"-", b"+", b"e5", b"1e", b"1e+", b"--1", b"1..2",
]  # fmt: skip
_NON_ASCII = [
    "é".encode(), "ü".encode(), "ｑｉｄ".encode(), "１".encode(), "٣".encode(), "😀".encode(), "\u00a0".encode(),
    "\u2028".encode(), "\u200b".encode(), "\ufeff".encode(), b"\xff", b"\xfe\xff", b"\xc3", b"\xe2\x82", b"\x80",
    b"\xed\xa0\x80",
]  # fmt: skip
_TOKENS = [
    b"qid:", b"qid:1", b"qid:x", b"qid:1:2", b"qid:-5", b"qid:" + b"9" * 40, b":", b"::", b"1:", b":1", b"0:1",
    b"-1:1", b"1:1:1", b"2147483647:1", b"2147483648:1", b"1000000000:1", b"99999999999999999999:1", b"#",
    b"# comment", b"\t", b"\x0b", b"\x0c", b"1:nan", b"1:inf", b"a:b", b"1e3:1", b"01:1", b"+1:1", b"1: 2",
]  # fmt: skip


def _pos(data: bytes, rng: random.Random) -> int:
    return rng.randrange(len(data) + 1)


def m_random_bytes(data: bytes, rng: random.Random) -> bytes:
    """Overwrite, insert or delete a few random bytes."""
    b = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        op = rng.random()
        p = rng.randrange(len(b) + 1)
        if op < 0.4 and b and p < len(b):
            b[p] = rng.randrange(256)
        elif op < 0.8:
            b[p:p] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 4)))
        elif b:
            del b[p : p + rng.randint(1, 4)]
    return bytes(b)


def m_truncate(data: bytes, rng: random.Random) -> bytes:
    """Cut the text anywhere (mid-token, mid-line, after a lone '\\r')."""
    return data[: _pos(data, rng)]


def m_huge_numbers(data: bytes, rng: random.Random) -> bytes:
    """Replace a label, qid, feature id or value by a huge, tiny or odd number."""
    lines = data.split(b"\n")
    for _ in range(rng.randint(1, 3)):
        i = rng.randrange(len(lines))
        tokens = lines[i].split(b" ")
        if not tokens:
            continue
        j = rng.randrange(len(tokens))
        huge = rng.choice(_HUGE)
        tok = tokens[j]
        if b":" in tok:
            head, _, tail = tok.partition(b":")
            tokens[j] = (head + b":" + huge) if rng.random() < 0.6 else (huge + b":" + tail)
        else:
            tokens[j] = huge
        lines[i] = b" ".join(tokens)
    return b"\n".join(lines)


def m_non_ascii(data: bytes, rng: random.Random) -> bytes:
    """Insert multi-byte UTF-8, invalid UTF-8 and odd Unicode spaces."""
    b = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        p = _pos(bytes(b), rng)
        b[p:p] = rng.choice(_NON_ASCII)
    return bytes(b)


def m_shuffle_tokens(data: bytes, rng: random.Random) -> bytes:
    """Shuffle the tokens of some lines (label or qid moved, comment in the middle)."""
    lines = data.split(b"\n")
    for _ in range(rng.randint(1, 3)):
        i = rng.randrange(len(lines))
        tokens = lines[i].split(b" ")
        rng.shuffle(tokens)
        lines[i] = b" ".join(tokens)
    return b"\n".join(lines)


def m_duplicate_lines(data: bytes, rng: random.Random) -> bytes:
    """Duplicate lines in place or elsewhere (a query reappearing later)."""
    lines = data.split(b"\n")
    for _ in range(rng.randint(1, 4)):
        i = rng.randrange(len(lines))
        lines.insert(rng.randrange(len(lines) + 1) if rng.random() < 0.5 else i, lines[i])
    return b"\n".join(lines)


def m_swap_lines(data: bytes, rng: random.Random) -> bytes:
    """Swap or drop lines."""
    lines = data.split(b"\n")
    if len(lines) > 1:
        i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
        lines[i], lines[j] = lines[j], lines[i]
        if rng.random() < 0.3:
            del lines[rng.randrange(len(lines))]
    return b"\n".join(lines)


def m_line_endings(data: bytes, rng: random.Random) -> bytes:
    """Mix LF, CRLF, lone CR, doubled newlines and trailing whitespace."""
    out = []
    for line in data.split(b"\n"):
        out.append(line + rng.choice([b"", b"", b" ", b"\t", b" \r"]))
    seps = [b"\n", b"\r\n", b"\r", b"\n\n", b"\r\r\n", b"\n\r"]
    text = out[0]
    for line in out[1:]:
        text += rng.choice(seps) + line
    return text + rng.choice([b"", b"\n", b"\r\n", b"\r"])


def m_nul_bytes(data: bytes, rng: random.Random) -> bytes:
    """Insert NUL bytes (inside tokens, between tokens, at line ends)."""
    b = bytearray(data)
    for _ in range(rng.randint(1, 5)):
        p = _pos(bytes(b), rng)
        b[p:p] = b"\x00" * rng.randint(1, 3)
    return bytes(b)


def m_tokens(data: bytes, rng: random.Random) -> bytes:
    """Insert or substitute malformed / edge-case tokens."""
    lines = data.split(b"\n")
    for _ in range(rng.randint(1, 3)):
        i = rng.randrange(len(lines))
        tokens = lines[i].split(b" ")
        j = rng.randrange(len(tokens) + 1)
        if rng.random() < 0.5 and j < len(tokens):
            tokens[j] = rng.choice(_TOKENS)
        else:
            tokens.insert(j, rng.choice(_TOKENS))
        lines[i] = b" ".join(tokens)
    return b"\n".join(lines)


def m_whitespace(data: bytes, rng: random.Random) -> bytes:
    """Replace separators by tabs, several spaces, vertical tabs or form feeds; drop some."""
    seps = [b"\t", b"  ", b"\x0b", b"\x0c", b"", b" \t "]
    parts = data.split(b" ")
    text = parts[0]
    for part in parts[1:]:
        text += (rng.choice(seps) if rng.random() < 0.2 else b" ") + part
    return text


def m_blank_and_comments(data: bytes, rng: random.Random) -> bytes:
    """Insert blank lines, comment-only lines and '#' inside lines."""
    lines = data.split(b"\n")
    for _ in range(rng.randint(1, 4)):
        lines.insert(rng.randrange(len(lines) + 1), rng.choice([b"", b"   ", b"#", b"# x", b"\t#qid:1 1:2"]))
    if rng.random() < 0.5:
        i = rng.randrange(len(lines))
        p = rng.randrange(len(lines[i]) + 1)
        lines[i] = lines[i][:p] + b"#" + lines[i][p:]
    return b"\n".join(lines)


def m_wrappers(data: bytes, rng: random.Random) -> bytes:
    """Gzip (whole or truncated), a UTF-8 BOM, or a gzip magic in front of plain text."""
    r = rng.random()
    if r < 0.4:
        z = gzip.compress(data)
        return z if rng.random() < 0.5 else z[: rng.randrange(len(z) + 1)]
    if r < 0.7:
        return b"\xef\xbb\xbf" + data
    if r < 0.85:
        return b"\x1f\x8b" + data
    return b"\xef\xbb\xbf\xef\xbb\xbf" + data


def m_drop_qid(data: bytes, rng: random.Random) -> bytes:
    """Remove the qid token from some or all lines (the LightGBM layout, or a mix)."""
    import re

    lines = data.split(b"\n")
    everywhere = rng.random() < 0.5
    return b"\n".join(
        re.sub(rb" qid:\S+", b"", line, count=1) if everywhere or rng.random() < 0.3 else line for line in lines
    )


MUTATORS: dict[str, Callable[[bytes, random.Random], bytes]] = {
    "random_bytes": m_random_bytes,
    "truncate": m_truncate,
    "huge_numbers": m_huge_numbers,
    "non_ascii": m_non_ascii,
    "shuffle_tokens": m_shuffle_tokens,
    "duplicate_lines": m_duplicate_lines,
    "swap_lines": m_swap_lines,
    "line_endings": m_line_endings,
    "nul_bytes": m_nul_bytes,
    "tokens": m_tokens,
    "whitespace": m_whitespace,
    "blank_and_comments": m_blank_and_comments,
    "wrappers": m_wrappers,
    "drop_qid": m_drop_qid,
}


def make_case(lines: list[bytes], rng: random.Random) -> tuple[bytes, list[str], dict]:
    """One fuzz input: (content, mutators applied, load_svmlight options)."""
    start = rng.randrange(len(lines))
    chunk = lines[start : start + rng.randint(1, 12)]
    data = b"\n".join(chunk) + b"\n"
    names = [rng.choice(list(MUTATORS)) for _ in range(rng.choice([1, 1, 2, 3]))]
    for name in names:
        if name == "wrappers" and name != names[-1]:
            continue  # wrap last: mutating compressed bytes only tests gzip's own checks
        data = MUTATORS[name](data, rng)
    options: dict = {}
    if rng.random() < 0.2:
        options["regroup"] = True
    if rng.random() < 0.2:
        options["sparse"] = True
    if rng.random() < 0.15:
        options["dtype"] = np.float64
    if rng.random() < 0.1:
        options["n_features"] = rng.choice([1, 5, 46, 100])
    return data, names, options


# ------------------------------------------------------------------------------- checking
def check_dataset(ds) -> None:
    """Invariants of a successfully loaded dataset (AssertionError if one fails)."""
    import scipy.sparse as sp

    n = ds.X.shape[0]
    assert ds.y.shape == (n,) and ds.ptr[0] == 0 and ds.ptr[-1] == n, "inconsistent shapes"
    assert (np.diff(ds.ptr) > 0).all(), "empty query"
    assert np.isfinite(ds.y).all(), "non-finite label"
    values = ds.X.data if sp.issparse(ds.X) else ds.X
    assert not np.isinf(values).any(), "inf in X"
    assert len(ds.query_ids) == ds.n_queries, "query id count"
    if ds.comments is not None:
        assert ds.comments.shape == (n,), "comment count"


def round_trip(ds, tmp: Path) -> None:
    """save_svmlight then load_svmlight gives the same data (when save accepts it)."""
    import scipy.sparse as sp

    from ranklearn.data import load_svmlight, save_svmlight

    path = tmp / "rt.txt"
    try:
        save_svmlight(ds, path)
    except ValueError:
        return  # qids or comments that cannot be written on one line: refused, as documented
    back = load_svmlight(path, n_features=ds.n_features or None, dtype=ds.X.dtype.type, sparse=True)
    a = sp.csr_matrix(ds.X)  # compared sparse: never densify a matrix with a huge feature id
    a.eliminate_zeros()  # explicit zeros are not written (NaN is)
    b = back.X
    assert a.shape == b.shape, "round trip changed the shape"
    assert np.array_equal(a.indptr, b.indptr) and np.array_equal(a.indices, b.indices), "round trip moved entries"
    assert np.array_equal(a.data, b.data, equal_nan=True), "round trip changed X"
    assert np.array_equal(ds.y, back.y), "round trip changed y"
    assert np.array_equal(ds.ptr, back.ptr), "round trip changed query boundaries"
    assert [str(q) for q in ds.query_ids.tolist()] == [str(q) for q in back.query_ids.tolist()], "round trip qids"


def run_case(data: bytes, options: dict, tmp: Path, *, as_file: bool) -> str:
    """Load one input. Returns "ok" or "DataFormatError"; any other exception propagates."""
    from ranklearn.data import load_svmlight
    from ranklearn.exceptions import DataFormatError

    try:
        if as_file:
            path = tmp / "case.txt"
            path.write_bytes(data)
            ds = load_svmlight(path, **options)
        else:
            ds = load_svmlight(io.BytesIO(data), **options)
    except DataFormatError as exc:
        assert "\n" not in str(exc) and "\r" not in str(exc), f"error message spans lines: {exc!r}"
        return "DataFormatError"
    check_dataset(ds)
    round_trip(ds, tmp)
    return "ok"


def fuzz(cases: int, seed: int, out: Path, *, lines: list[bytes] | None = None, verbose: bool = True) -> Counter:
    """Run ``cases`` seeded cases; write a reproducer for every unexpected exception."""
    lines = lines if lines is not None else sample_lines()
    rng = random.Random(seed)
    counts: Counter = Counter()
    failures: Counter = Counter()
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmpdir:
        tmp = Path(tmpdir)
        for case in range(cases):
            data, names, options = make_case(lines, rng)
            try:
                counts[run_case(data, options, tmp, as_file=rng.random() < 0.3)] += 1
            except Exception as exc:  # noqa: BLE001 - the point is to catch everything
                counts["other"] += 1
                kind = f"{type(exc).__name__}: {str(exc)[:120]}"
                failures[kind] += 1
                out.mkdir(parents=True, exist_ok=True)
                repro = out / f"case-{seed}-{case}.bin"
                repro.write_bytes(data)
                (out / f"case-{seed}-{case}.txt").write_text(
                    f"mutators: {names}\noptions: {options}\n\n{traceback.format_exc()}"
                )
                if verbose:
                    print(f"case {case}: {kind} (mutators {names}, options {options}) -> {repro}", file=sys.stderr)
            if verbose and (case + 1) % 1000 == 0:
                print(f"{case + 1} cases, {dict(counts)}, {time.perf_counter() - start:.0f}s", file=sys.stderr)
    counts["cases"] = cases
    counts["seconds"] = round(time.perf_counter() - start)
    for kind, n in failures.items():
        counts[f"  {kind}"] = n
    return counts


def replay(path: Path, options: dict) -> None:
    """Load one reproducer with the loader and show what comes out."""
    from ranklearn.data import load_svmlight

    print(load_svmlight(io.BytesIO(path.read_bytes()), **options))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path("fuzz-failures"), help="folder for reproducers")
    parser.add_argument("--replay", type=Path, help="load one reproducer file and exit")
    parser.add_argument("--fallback", action="store_true", help="use the built-in sample even if real data exists")
    args = parser.parse_args(argv)
    if args.replay is not None:
        replay(args.replay, {})
        return 0
    lines = list(FALLBACK_SAMPLE) if args.fallback else sample_lines()
    source = "built-in sample" if args.fallback or not REAL_SAMPLE.is_file() else str(REAL_SAMPLE)
    counts = fuzz(args.cases, args.seed, args.out, lines=lines)
    print(f"fuzz_loader: {args.cases} cases, seed {args.seed}, lines from {source}")
    print(f"  successes:        {counts['ok']}")
    print(f"  DataFormatErrors: {counts['DataFormatError']}")
    print(f"  other exceptions: {counts['other']}" + (f" (reproducers in {args.out}/)" if counts["other"] else ""))
    for key, n in counts.items():
        if key.startswith("  "):
            print(f"    {n} x {key.strip()}")
    print(f"  time:             {counts['seconds']}s")
    return 1 if counts["other"] else 0


if __name__ == "__main__":
    sys.exit(main())
