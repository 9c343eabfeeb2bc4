"""Ctrl-C stress of ``ranklearn train --workers 2`` (a local Dask cluster made by the command).

Not a CI test: it runs the command many times, each time sending SIGINT to its whole process
group (as a terminal's Ctrl-C does) after a random delay drawn over the command's whole life
(start, cluster start, reading, training, saving, the final table, the cluster's shutdown),
with stderr on a pseudo-terminal as for a user. Per run it records the delay, the exit
status, the seconds from SIGINT to exit, stderr's last line, whether a traceback (or
distributed/asyncio log noise) appeared, and whether a model the line says was saved loads.

    PYTHONPATH=src python tools/ctrlc_stress.py --runs 60 --train ../shared/data/MQ2008/Fold1/train.txt

The summary counts the runs by their last line's kind and lists every bad run: a traceback or
log noise, more than one ``ranklearn:`` line after the SIGINT, an exit status other than 130
(or 0 when the command's output was complete before the SIGINT), a hang (SIGINT to exit over
--hang seconds),
or a saved model that does not load.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import json
import os
import pty
import random
import re
import select
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RANKLEARN = Path(sys.executable).with_name("ranklearn")
NOISE = re.compile(r"Traceback|distributed\.|asyncio|AllExit|Task exception|Exception ignored|CancelledError")
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def run_once(train: Path, options: list[str], delay: float, workdir: Path) -> dict:
    """One interrupted run: SIGINT to the process group ``delay`` seconds after the start."""
    save = workdir / "model.json"
    save.unlink(missing_ok=True)
    master, slave = pty.openpty()
    start = time.monotonic()
    proc = subprocess.Popen(
        [str(RANKLEARN), "train", "--train", str(train), "--model", "lambdamart", "--workers", "2",
         "--save", str(save), *options],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=slave, env={**os.environ, "COLUMNS": "120"},
        preexec_fn=lambda: (os.setsid(), signal.signal(signal.SIGINT, signal.SIG_DFL)),
    )  # fmt: skip
    os.close(slave)
    seen = b""
    sent = None
    while True:
        now = time.monotonic()
        if sent is None and now - start >= delay and proc.poll() is None:
            os.killpg(proc.pid, signal.SIGINT)
            sent = (time.monotonic(), len(seen))
        ready, _, _ = select.select([master], [], [], 0.02)
        if ready:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # the pty's other side closed
                chunk = b""
            seen += chunk
            if not chunk and proc.poll() is not None:
                break
        elif proc.poll() is not None:
            break
        if now - start > 300:
            os.killpg(proc.pid, signal.SIGKILL)
            break
    proc.wait()
    ended = time.monotonic()
    os.close(master)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)  # any worker left behind (none should be)
    text = ANSI.sub("", seen.decode("utf-8", "replace")).replace("\r", "\n")
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    after = ANSI.sub("", seen[sent[1]:].decode("utf-8", "replace")).replace("\r", "\n") if sent else ""
    last = lines[-1] if lines else ""
    saved = re.search(r"saved (?:the best model so far )?to (\S+?)(?:;|$)|: saved to (\S+?);", last)
    loads = None
    if "saved" in last and "nothing saved" not in last and "not saved" not in last:
        loads = _loads(save)
    elif proc.returncode == 0:
        loads = _loads(save)
    return {
        "delay": round(delay, 2),
        "code": proc.returncode,
        "interrupted": sent is not None,
        "sigint_to_exit": round(ended - sent[0], 2) if sent else None,
        "last": last[:200],
        "noise": bool(NOISE.search(text)),
        "ranklearn_lines_after_sigint": len(re.findall(r"^\s*ranklearn: ", after, re.M)),
        "saved_loads": loads,
        "said_saved": bool(saved),
        "stderr_tail": text[-1500:],
    }


def _loads(save: Path) -> bool:
    code = subprocess.run(
        [sys.executable, "-c", f"import numpy as np; from ranklearn.io import load_model; m = load_model({str(save)!r}); "
         f"assert np.isfinite(m.predict(np.zeros((3, m.n_features_in_)))).all()"],
        capture_output=True,
    ).returncode  # fmt: skip
    return code == 0


def kind(result: dict) -> str:
    """The run's last line, with the paths and numbers taken out (the summary's key)."""
    if not result["interrupted"] or result["code"] == 0:
        when = "before the SIGINT" if not result["interrupted"] else "its output before the SIGINT, status 0"
        return f"finished {when}: " + ("table" if result["code"] == 0 else result["last"][:80])
    return re.sub(r"/\S+", "F", result["last"])[:140]


def bad(result: dict, hang: float) -> list[str]:
    problems = []
    if result["noise"]:
        problems.append("traceback/log noise")
    if result["interrupted"] and result["code"] == 0:  # the SIGINT came after the command's last output
        pass
    elif result["interrupted"]:
        if result["code"] != 130:
            problems.append(f"exit {result['code']}")
        if result["ranklearn_lines_after_sigint"] != 1:
            problems.append(f"{result['ranklearn_lines_after_sigint']} ranklearn: lines after SIGINT")
        if not result["last"].startswith("ranklearn: interrupted"):
            problems.append("last line is not 'ranklearn: interrupted...'")
        if result["sigint_to_exit"] is not None and result["sigint_to_exit"] > hang:
            problems.append(f"hang {result['sigint_to_exit']} s")
    elif result["code"] != 0:
        problems.append(f"exit {result['code']} without SIGINT")
    if result["saved_loads"] is False:
        problems.append("saved model does not load")
    return problems


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--train", type=Path, required=True)
    parser.add_argument("--runs", type=int, default=60)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-delay", type=float, default=None,
                        help="delays are uniform in [0, this]; default: 1.1 x an uninterrupted run's time")  # fmt: skip
    parser.add_argument("--hang", type=float, default=8.0,
                        help="seconds from SIGINT to exit counted as a hang (the bug was 10-11 s; a normal close of "
                             "the cluster takes 1-6 s at load 2-12)")  # fmt: skip
    parser.add_argument("--json", type=Path, default=None, help="write every run's record here")
    parser.add_argument("options", nargs="*", default=["--n-estimators", "60"],
                        help="more train options (after --)")  # fmt: skip
    args = parser.parse_args()
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        if args.max_delay is None:
            t0 = time.monotonic()
            base = run_once(args.train, args.options, 1e9, workdir)
            args.max_delay = 1.1 * (time.monotonic() - t0)
            print(f"uninterrupted run: {time.monotonic() - t0:.1f} s, exit {base['code']}, last line {base['last']!r}; "
                  f"delays uniform in [0, {args.max_delay:.1f}] s; load {os.getloadavg()[0]:.2f}", flush=True)  # fmt: skip
        results = []
        for i in range(args.runs):
            result = run_once(args.train, args.options, rng.uniform(0, args.max_delay), workdir)
            result["load"] = round(os.getloadavg()[0], 2)
            result["bad"] = bad(result, args.hang)
            results.append(result)
            print(f"{i + 1:3d} delay {result['delay']:5.2f} s exit {result['code']} "
                  f"SIGINT->exit {result['sigint_to_exit']} s load {result['load']:.2f} "
                  f"{'BAD ' + ', '.join(result['bad']) if result['bad'] else 'ok'}: {result['last'][:110]}", flush=True)  # fmt: skip
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=1))
    print(f"\n{len(results)} runs, load {os.getloadavg()[0]:.2f} at the end")
    for line, n in collections.Counter(kind(r) for r in results).most_common():
        print(f"{n:4d}  {line}")
    times = sorted(r["sigint_to_exit"] for r in results if r["sigint_to_exit"] is not None)
    if times:
        print(f"SIGINT to exit: median {times[len(times) // 2]:.2f} s, max {times[-1]:.2f} s")
    bads = [r for r in results if r["bad"]]
    print(f"bad runs: {len(bads)}; tracebacks/noise: {sum(r['noise'] for r in results)}; "
          f"hangs over {args.hang:g} s: {sum(any(b.startswith('hang') for b in r['bad']) for r in results)}; "
          f"saved models that do not load: {sum(r['saved_loads'] is False for r in results)}")  # fmt: skip
    for r in bads:
        print(f"--- delay {r['delay']} s: {', '.join(r['bad'])}\n{r['stderr_tail'][-800:]}")


if __name__ == "__main__":
    main()
