"""The thread policy: n_jobs, CPU affinity, cgroup quotas, and the threads a fit really uses."""

from __future__ import annotations

import os
import subprocess
import sys

import numba
import pytest

from ranklearn._threads import (
    SPIN_COUNT,
    WAIT_POLICY_SETTINGS,
    RunningFits,
    apply_wait_policy,
    available_cpus,
    cgroup_cpu_limit,
    fair_share,
    fit_threads,
    resolve_n_jobs,
    thread_limit,
)


def test_n_jobs_meanings():
    assert resolve_n_jobs(None) == resolve_n_jobs(-1) == min(available_cpus(), numba.config.NUMBA_NUM_THREADS)
    assert resolve_n_jobs(1) == 1
    assert resolve_n_jobs(10_000) == numba.config.NUMBA_NUM_THREADS  # never more than numba's pool
    for bad in (0, -2, True, 1.5):
        with pytest.raises(ValueError, match="n_jobs must be"):
            resolve_n_jobs(bad)


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="needs os.sched_setaffinity (Linux)")
def test_cpu_affinity_is_honoured():
    code = "import os; os.sched_setaffinity(0, {min(os.sched_getaffinity(0))}); " \
           "from ranklearn._threads import available_cpus; print(available_cpus())"  # fmt: skip
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "1"


@pytest.mark.parametrize(
    "files,expected",
    [
        ({"cpu.max": "150000 100000\n"}, 2),  # 1.5 CPUs: two threads
        ({"cpu.max": "100000 100000\n"}, 1),
        ({"cpu.max": "max 100000\n"}, None),
        ({"cpu/cpu.cfs_quota_us": "300000\n", "cpu/cpu.cfs_period_us": "100000\n"}, 3),
        ({"cpu/cpu.cfs_quota_us": "-1\n", "cpu/cpu.cfs_period_us": "100000\n"}, None),
        ({}, None),
    ],
)
def test_cgroup_quota(tmp_path, files, expected):
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    assert cgroup_cpu_limit(tmp_path) == expected


def test_thread_limit_sets_numba_and_torch_and_restores_them():
    torch = pytest.importorskip("torch")
    numba_before, torch_before = numba.get_num_threads(), torch.get_num_threads()
    with thread_limit(1):
        assert numba.get_num_threads() == 1 and torch.get_num_threads() == 1
    assert numba.get_num_threads() == numba_before and torch.get_num_threads() == torch_before


@pytest.mark.parametrize("name", ["lambdamart", "ranknet"])
def test_a_fit_and_its_metrics_run_on_the_fits_threads(name):
    """The callback runs where the evaluation metrics just ran: inside the fit's thread limit."""
    from ranklearn.datasets import make_ranking_splits
    from ranklearn.registry import get_model_class

    if name == "ranknet":
        torch = pytest.importorskip("torch")
        params = dict(n_estimators=2, hidden=(4,), n_networks=1)
    else:
        torch = sys.modules.get("torch")
        params = dict(n_estimators=2, num_leaves=4)
    tr, va, _ = make_ranking_splits(n_queries=(20, 5, 5), n_features=4, n_informative=2, random_state=0)
    seen = []

    def record(iteration, total, results):
        seen.append((numba.get_num_threads(), torch.get_num_threads() if torch is not None else 1))

    get_model_class(name)(**params, n_jobs=1).fit(tr.X, tr.y, qid=tr.qid, eval_set=[(va.X, va.y, va.qid)], callbacks=[record])
    assert seen and set(seen) == {(1, 1)}


def test_wait_policy_spins_briefly_unless_the_user_chose_one():
    env: dict[str, str] = {"PATH": "/bin"}
    assert apply_wait_policy(env) is True
    assert env == {"PATH": "/bin", "OMP_WAIT_POLICY": "PASSIVE", "GOMP_SPINCOUNT": str(SPIN_COUNT)}
    for name in WAIT_POLICY_SETTINGS:
        env = {name: "7"}
        assert apply_wait_policy(env) is False
        assert env == {name: "7"}


# Import ranklearn, then torch (when installed), then fit: numba's and torch's OpenMP runtimes
# print the settings they read at load (OMP_DISPLAY_ENV), one block per runtime.
_DISPLAY_CODE = """
import ranklearn, numba
try:
    import torch
    torch.ones(3) + 1
except ImportError:
    pass
from ranklearn.datasets import make_ranking
from ranklearn.models import LambdaMART
X, y, q = make_ranking(20, 4, n_informative=2, random_state=0, return_X_y=True)
LambdaMART(n_estimators=2, num_leaves=4, n_jobs=2).fit(X, y, q)
print(numba.threading_layer())
"""


def _openmp_settings(**user_env: str) -> tuple[str, list[str], list[str]]:
    # This test process imported ranklearn, which set the policy in os.environ: start clean.
    env = {k: v for k, v in os.environ.items() if k not in WAIT_POLICY_SETTINGS}
    env.update(user_env, OMP_DISPLAY_ENV="VERBOSE")
    out = subprocess.run([sys.executable, "-c", _DISPLAY_CODE], capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr
    lines = [line.strip() for line in out.stderr.splitlines()]
    policies = [line for line in lines if line.startswith("OMP_WAIT_POLICY =")]
    spins = [line for line in lines if line.startswith("GOMP_SPINCOUNT =")]
    return out.stdout.strip().splitlines()[-1], policies, spins


def test_openmp_runtimes_load_with_the_short_spin():
    layer, policies, spins = _openmp_settings()
    if layer != "omp":
        pytest.skip(f"numba runs on the {layer} threading layer, not OpenMP")
    # GNU libgomp says PASSIVE for an unset policy too, but spins 300000 times: the count is the proof
    assert spins and set(spins) == {f"GOMP_SPINCOUNT = '{SPIN_COUNT}'"}, spins
    assert set(policies) == {"OMP_WAIT_POLICY = 'PASSIVE'"}


@pytest.mark.parametrize(
    "user_env,expected",
    [
        ({"OMP_WAIT_POLICY": "active"}, "OMP_WAIT_POLICY = 'ACTIVE'"),
        ({"GOMP_SPINCOUNT": "1000"}, "GOMP_SPINCOUNT = '1000'"),
    ],
)
def test_the_users_own_wait_policy_wins(user_env, expected):
    layer, policies, spins = _openmp_settings(**user_env)
    if layer != "omp":
        pytest.skip(f"numba runs on the {layer} threading layer, not OpenMP")
    shown = policies if expected.startswith("OMP") else spins
    assert shown and set(shown) == {expected}, shown


@pytest.mark.parametrize("torch_first,expected", [(True, "True"), (False, "False")])
def test_torch_imported_before_ranklearn_is_noticed(torch_first, expected):
    pytest.importorskip("torch")
    imports = "import torch, ranklearn" if torch_first else "import ranklearn, torch"
    code = f"{imports}; from ranklearn import _threads; print(_threads._torch_loaded_first)"
    env = {k: v for k, v in os.environ.items() if k not in WAIT_POLICY_SETTINGS}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == expected


def test_a_neural_fit_on_spinning_torch_threads_warns_once(monkeypatch):
    """Warned at the user's fit, once; not on one thread."""
    import warnings

    pytest.importorskip("torch")
    from ranklearn import _threads
    from ranklearn.datasets import make_ranking
    from ranklearn.models import RankNet

    if _threads.resolve_n_jobs(2) < 2:
        pytest.skip("needs 2 CPUs for a 2-thread fit")
    monkeypatch.setattr(_threads, "_torch_loaded_first", True)
    monkeypatch.setattr(_threads, "_torch_warned", False)
    X, y, q = make_ranking(10, 4, n_informative=2, random_state=0, return_X_y=True)
    params = dict(n_estimators=1, hidden=(4,), n_networks=1)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        RankNet(**params, n_jobs=1).fit(X, y, q)
        RankNet(**params, n_jobs=2).fit(X, y, q)
        RankNet(**params, n_jobs=2).fit(X, y, q)
    spins = [w for w in seen if "spin while they wait" in str(w.message)]
    assert len(spins) == 1 and spins[0].category is RuntimeWarning
    assert spins[0].filename == __file__


# ---------------------------------------------------------------------------- fits share the CPUs

@pytest.mark.parametrize(
    ("demands", "cpus", "expected"),
    [
        ([2], 2, [2]),
        ([2, 2], 2, [1, 1]),  # two fits on 2 cores: one thread each
        ([2, 1], 2, [1, 1]),
        ([4, 1], 4, [3, 1]),  # a one-thread fit leaves the rest to the other
        ([4, 4, 4], 4, [2, 1, 1]),  # the CPU left over goes to the first slot
        ([2, 2, 2], 2, [1, 1, 1]),  # more fits than CPUs: still one thread each
        ([8, 8], 6, [3, 3]),
    ],
)
def test_fair_share_hand_computed(demands, cpus, expected):
    assert [fair_share(demands, cpus, i) for i in range(len(demands))] == expected


_HOLDER = """
import os, sys
if sys.argv[3] != "all":
    os.sched_setaffinity(0, {int(sys.argv[3])})
from ranklearn._threads import RunningFits
fits = RunningFits(sys.argv[1])
fits.register(fits.new_key(), int(sys.argv[2]))
print("ready", flush=True)
sys.stdin.readline()
"""


def _start_holder(directory, threads: int, cpu: int | None = None) -> subprocess.Popen:
    """Another process with a fit of ``threads`` threads running (until it is killed), pinned to ``cpu``."""
    proc = subprocess.Popen([sys.executable, "-c", _HOLDER, str(directory), str(threads), "all" if cpu is None else str(cpu)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)  # fmt: skip
    assert proc.stdout.readline().strip() == "ready"
    return proc


def _stop(proc: subprocess.Popen) -> None:
    proc.kill()  # SIGKILL: the kernel drops the dead process's lock
    proc.wait()
    proc.stdin.close()
    proc.stdout.close()


def _register(fits: RunningFits, threads: int) -> int:
    key = fits.new_key()
    fits.register(key, threads)
    return key


@pytest.fixture
def no_rebalance_delay(monkeypatch):
    monkeypatch.setattr("ranklearn._threads.REBALANCE_INTERVAL", 0.0)


@pytest.mark.skipif(sys.platform == "win32", reason="fcntl locks (POSIX)")
def test_running_fits_of_two_processes(tmp_path, no_rebalance_delay):
    fits = RunningFits(tmp_path)
    key = _register(fits, 2)
    assert fits.threads(key, cpus=2) == 2
    other = _start_holder(tmp_path, 2)
    try:
        assert fits.threads(key, cpus=2) == 1
        assert fits.threads(key, cpus=4) == 2
        second = _register(fits, 2)  # a second fit of this process takes part of the process's share
        assert (fits.threads(key, cpus=4), fits.threads(second, cpus=4)) == (1, 1)
        fits.unregister(second)
    finally:
        _stop(other)
    assert fits.threads(key, cpus=2) == 2
    one = _start_holder(tmp_path, 1)
    try:
        assert fits.threads(key, cpus=4) == 2 and fits.threads(key, cpus=3) == 2
    finally:
        _stop(one)
    fits.unregister(key)
    with pytest.raises(KeyError, match="not registered"):
        fits.threads(key, cpus=2)


@pytest.mark.skipif(sys.platform == "win32", reason="fcntl locks (POSIX)")
def test_a_fit_follows_the_fits_that_start_and_end_beside_it(tmp_path, monkeypatch, no_rebalance_delay):
    """n_jobs=None gives way to another process's fit and takes the CPUs back when it ends;
    an explicit n_jobs keeps its threads."""
    from ranklearn import LambdaMART
    from ranklearn.datasets import make_ranking

    if available_cpus() < 2 or numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("needs 2 CPUs")
    monkeypatch.setattr("ranklearn._threads.RUNNING_FITS", RunningFits(tmp_path))
    monkeypatch.setattr("ranklearn._threads.available_cpus", lambda: 2)
    X, y, qid = make_ranking(100, 5, n_informative=3, docs_per_query=(125, 125), random_state=0,
                             return_X_y=True)  # over LambdaMART's one-thread size
    seen, other = [], []

    def record(iteration, total, results):
        seen.append(numba.get_num_threads())
        if iteration == 1:
            other.append(_start_holder(tmp_path, 2))
        elif iteration == 3:
            _stop(other[0])

    try:
        LambdaMART(n_estimators=4, num_leaves=4).fit(X, y, qid, callbacks=[record])
        assert seen == [2, 1, 1, 2]
        seen.clear()
        LambdaMART(n_estimators=4, num_leaves=4, n_jobs=2).fit(X, y, qid, callbacks=[record])
        assert seen == [2, 2, 2, 2]
    finally:
        for proc in other:
            _stop(proc)


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="needs os.sched_setaffinity (Linux)")
def test_fits_pinned_to_other_cpus_do_not_count(tmp_path, no_rebalance_delay):
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("needs 2 CPUs")
    fits = RunningFits(tmp_path)
    key = _register(fits, 2)
    pinned = _start_holder(tmp_path, 2, cpu=min(os.sched_getaffinity(0)))  # a job in its own cpuset
    try:
        assert fits.threads(key, cpus=2) == 2
    finally:
        _stop(pinned)
    fits.unregister(key)


def test_without_fcntl_every_fit_runs_unshared(tmp_path, monkeypatch):
    """Windows has no fcntl: registering, asking and ending cost nothing and raise nothing."""
    monkeypatch.setitem(sys.modules, "fcntl", None)  # import fcntl raises ImportError
    fits = RunningFits(tmp_path)
    key = _register(fits, 2)
    assert fits.threads(key, cpus=2) == 2
    fits.unregister(key)
    monkeypatch.setattr("ranklearn._threads.RUNNING_FITS", fits)
    with fit_threads(None, True) as share:
        assert share.current == resolve_n_jobs(None)


@pytest.mark.skipif(sys.platform == "win32", reason="fcntl locks (POSIX)")
def test_a_removed_lock_file_is_opened_again(tmp_path, no_rebalance_delay):
    """A temporary-directory cleaner may delete the file: the next fit opens the one the others use."""
    fits = RunningFits(tmp_path)
    fits.unregister(_register(fits, 2))  # the file is open, no slot held
    for path in tmp_path.iterdir():
        path.unlink()
    other = _start_holder(tmp_path, 2)  # makes a new file
    try:
        key = _register(fits, 2)
        assert fits.threads(key, cpus=2) == 1
        fits.unregister(key)
    finally:
        _stop(other)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_child_forked_inside_a_fit_starts_afresh(tmp_path, monkeypatch):
    """The child neither waits on a mutex held by a thread of the parent nor takes the
    parent's fit for its own."""
    import ranklearn._threads as threads_module

    monkeypatch.setattr("ranklearn._threads.RUNNING_FITS", RunningFits(tmp_path))
    with fit_threads(None, True):
        with threads_module.RUNNING_FITS._mutex:  # as a rebalance in another thread would hold it
            pid = os.fork()
            if pid == 0:  # the child: exit 0 only if it can run a fit of its own
                import signal

                signal.alarm(10)
                ok = getattr(threads_module._fit_share, "share", None) is None
                with fit_threads(None, True) as share:
                    ok = ok and share._key is not None
                os._exit(0 if ok else 1)
        _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
