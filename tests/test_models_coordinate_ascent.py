"""Coordinate Ascent (RankLib -ranker 4): the metric searched feature by feature."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.utils import check_random_state

from ranklearn.data.groups import group_ptr
from ranklearn.datasets import make_ranking
from ranklearn.io import load_model
from ranklearn.metrics import get_metric
from ranklearn.models.coordinate_ascent import CoordinateAscent
from test_cli import run, small_files  # noqa: F401 (fixture)


def brute_force_restart(X, y, ptr, metric, rng, *, line_search_steps=25, step_base=0.05, step_scale=2.0, tolerance=0.001):
    """One restart of RankLib's procedure, every candidate scored from scratch with X @ w."""
    X = X.astype(np.float64)
    n = X.shape[1]
    w = np.full(n, 1.0 / n)
    best = start = metric.mean(y, X @ w, ptr)
    fails = 0
    while (n > 1 and fails < n - 1) or (n == 1 and fails == 0):
        for f in rng.permutation(n):
            orig, found = w[f], None
            for direction in (1, -1, 0):
                if direction == 0:
                    candidates = [-orig]
                else:
                    step = 0.001 * direction
                    if orig != 0 and abs(step) > 0.5 * abs(orig):
                        step = direction * step_base * abs(orig)
                    candidates, total = [], 0.0
                    for j in range(line_search_steps):
                        total += step * step_scale**j
                        candidates.append(total)
                for delta in candidates:
                    trial = w.copy()
                    trial[f] = orig + delta
                    value = metric.mean(y, X @ trial, ptr)
                    if value > best:
                        best, found = value, delta
                if found is not None:
                    break
            if found is None:
                fails += 1
            else:
                fails = 0
                w[f] = orig + found
                w /= np.abs(w).sum()
        if best - start < tolerance:
            break
    return w, best


@pytest.fixture(scope="module")
def data():
    return make_ranking(30, 5, n_informative=3, docs_per_query=(5, 15), random_state=7, return_X_y=True)


@pytest.mark.parametrize("spec", ["ndcg@10", "map", "err@5"])
def test_one_restart_equals_the_brute_force_procedure(data, spec):
    X, y, qid = data
    ptr = group_ptr(qid)
    metric = get_metric(spec, max_grade=float(max(1.0, y.max())))
    ref_w, ref_best = brute_force_restart(X, y, ptr, metric, check_random_state(3))
    m = CoordinateAscent(n_estimators=1, metric=spec, random_state=3).fit(X, y, qid)
    np.testing.assert_allclose(m.coef_, ref_w, rtol=1e-9, atol=1e-12)
    assert m.score(X, y, qid=qid) == pytest.approx(ref_best, abs=1e-12)
    assert np.abs(m.coef_).sum() == pytest.approx(1.0) and m.intercept_ == 0.0


@pytest.mark.parametrize("spec", ["ndcg@5", "dcg@5", "err@5", "map", "p@3"])
@pytest.mark.parametrize("ties", ["stable", "pessimistic", "average"])
def test_line_values_equal_the_metric_of_every_step_with_ties(spec, ties):
    # scores and a feature on a coarse grid: many steps leave a query's order unchanged (the
    # kernel reuses its value) and many give equal scores (the kernel must re-evaluate)
    from ranklearn.models.coordinate_ascent import _ideal_values, _line_values, _rankings, _row_gains

    rng = np.random.default_rng(1)
    qid = np.repeat(np.arange(25), rng.integers(3, 12, 25))
    ptr = group_ptr(qid)
    y = rng.integers(0, 3, qid.size).astype(float)
    scores = rng.integers(0, 4, qid.size) * 0.25
    xf = rng.integers(0, 3, qid.size).astype(float)
    deltas = np.concatenate([0.001 * (2.0 ** np.arange(1, 12) - 1), [-0.25, -0.5, 0.0, 0.25, 0.5]])
    y[ptr[3] : ptr[4]] = 0  # a query without a relevant document keeps its value
    metric = get_metric(spec, ties=ties, max_grade=2)
    current = np.nan_to_num(metric.per_query(y, scores, ptr))
    qweight = rng.uniform(0.5, 2.0, ptr.size - 1)
    queries = np.arange(1, ptr.size - 1, 2)  # every other query
    _, k, gain_kind = metric.kernel_args()[:3]
    relevant = np.add.reduceat((y > 0).astype(np.int64), ptr[:-1])
    ideal = _ideal_values(y, ptr, k, gain_kind) if spec.startswith("ndcg") else np.ones(ptr.size - 1)
    got = _line_values(y, _row_gains(y, gain_kind), scores, _rankings(scores, ptr), xf, ptr, queries, relevant, ideal,
                       deltas, qweight, current, *metric.kernel_args())  # fmt: skip
    for s, delta in enumerate(deltas):
        moved = metric.per_query(y, scores + delta * xf, ptr)
        expected = qweight[queries] @ moved[queries] - qweight[queries] @ current[queries]
        assert got[s] == pytest.approx(expected, abs=1e-12), (s, delta)


def test_finds_the_one_informative_feature():
    rng = np.random.default_rng(0)
    qid = np.repeat(np.arange(20), 10)
    y = rng.integers(0, 3, qid.size).astype(float)
    X = rng.normal(size=(qid.size, 4)).astype(np.float32)
    X[:, 2] = y + 0.1 * rng.random(qid.size)  # ranks every query perfectly
    m = CoordinateAscent(n_estimators=2, random_state=0).fit(X, y, qid)
    assert m.score(X, y, qid=qid) == pytest.approx(1.0)
    assert np.argmax(np.abs(m.coef_)) == 2


def test_restarts_are_driver_iterations_and_the_best_on_validation_is_kept(data):
    X, y, qid = data
    Xv, yv, qv = make_ranking(20, 5, n_informative=3, random_state=8, return_X_y=True)
    m = CoordinateAscent(n_estimators=4, line_search_steps=8, random_state=1).fit(X, y, qid, eval_set=[(Xv, yv, qv)])
    history = m.evals_result_["valid_0"]["ndcg@10"]
    assert m.n_iter_ == 4 and len(history) == 4
    assert m.best_iteration_ == int(np.argmax(history)) + 1 and m.best_score_ == max(history)
    assert m.score(Xv, yv, qid=qv) == pytest.approx(max(history), abs=1e-12)


def test_without_validation_the_best_restart_on_training_is_kept(data):
    X, y, qid = data
    # restarts draw their feature orders from one generator, as the reference's three runs do
    three = CoordinateAscent(n_estimators=3, random_state=0).fit(X, y, qid)
    rng = check_random_state(0)
    ptr, metric = group_ptr(qid), get_metric("ndcg@10")
    results = [brute_force_restart(X, y, ptr, metric, rng) for _ in range(3)]
    assert len({round(r[1], 12) for r in results}) == 3  # distinct restarts: the choice matters
    best_w = max(results, key=lambda r: r[1])[0]
    np.testing.assert_allclose(three.coef_, best_w, rtol=1e-9, atol=1e-12)


def test_regularized_stays_closer_to_uniform(data):
    X, y, qid = data
    u = np.full(X.shape[1], 1.0 / X.shape[1])
    free = CoordinateAscent(n_estimators=1, random_state=0).fit(X, y, qid)
    held = CoordinateAscent(n_estimators=1, random_state=0, regularized=True, slack=10.0).fit(X, y, qid)
    assert np.linalg.norm(held.coef_ - u) < np.linalg.norm(free.coef_ - u)


def test_bad_parameters_and_save_load(data, tmp_path):
    X, y, qid = data
    with pytest.raises(ValueError, match="n_estimators"):
        CoordinateAscent(n_estimators=0).fit(X, y, qid)
    with pytest.raises(ValueError, match="docid"):
        CoordinateAscent(metric=get_metric("ndcg@10", ties="docid")).fit(X, y, qid)
    m = CoordinateAscent(n_estimators=1, line_search_steps=5, random_state=0).fit(X, y, qid)
    m.save(tmp_path / "ca.json")
    back = load_model(tmp_path / "ca.json")
    assert type(back) is CoordinateAscent and back.line_search_steps == 5
    np.testing.assert_array_equal(back.predict(X), m.predict(X))


def test_cli_train_predict_export(capsys, tmp_path, small_files):  # noqa: F811
    model = tmp_path / "ca.json"
    code, out, err = run(capsys, "train", "--train", small_files["train"], "--validate", small_files["vali"],
                         "--model", "coordinate-ascent", "--n-estimators", 2, "--line-search-steps", 10, "--seed", 0,
                         "--save", model)  # fmt: skip
    assert code == 0, err
    assert (load_model(model).n_estimators, load_model(model).line_search_steps) == (2, 10)
    code, _, err = run(capsys, "predict", "--model", model, "--data", small_files["test"], "--out", tmp_path / "s")
    assert code == 0, err
    code, _, err = run(capsys, "export", "--model", model, "--format", "ranklib", "--out", tmp_path / "ca.txt")
    assert code == 0, err
    assert (tmp_path / "ca.txt").read_text().startswith("## Coordinate Ascent\n")


@pytest.mark.slow
def test_mq2008_fold1_near_ranklib(shared_data):
    from ranklearn.datasets import load_letor_fold

    tr, va, te = load_letor_fold(shared_data / "MQ2008", 1)
    m = CoordinateAscent(random_state=0).fit(tr.X, tr.y, qid=tr.qid, eval_set=[(va.X, va.y, va.qid)])
    ndcg = get_metric("ndcg@10").mean(te.y, m.predict(te.X), te.ptr)
    assert ndcg >= 0.4820 - 0.005  # RankLib's Coordinate Ascent on this fold: 0.4820 (ours 0.4824)


def test_small_data_fits_on_one_thread_whatever_n_jobs(data, monkeypatch):
    # metric-fitted rankers (Coordinate Ascent, AdaRank) run hundreds of short parallel loops:
    # below PARALLEL_MIN_DOCS rows they fit on one thread, with the same weights
    from ranklearn.metrics.kernels import PARALLEL_MIN_DOCS
    from ranklearn.models.adarank import AdaRank

    for cls in (CoordinateAscent, AdaRank):
        assert cls(n_jobs=2)._fit_threads(PARALLEL_MIN_DOCS - 1) == 1
        assert cls(n_jobs=2)._fit_threads(PARALLEL_MIN_DOCS) == 2
    X, y, qid = data
    serial = CoordinateAscent(n_estimators=2, line_search_steps=6, random_state=0, n_jobs=2).fit(X, y, qid)
    monkeypatch.setattr("ranklearn.models._linear.PARALLEL_MIN_DOCS", 0)  # now on n_jobs threads (where the machine has them)
    parallel = CoordinateAscent(n_estimators=2, line_search_steps=6, random_state=0, n_jobs=2).fit(X, y, qid)
    np.testing.assert_array_equal(parallel.coef_, serial.coef_)


def test_regularized_penalty_is_the_per_value_loop_bit_for_bit():
    # the penalty of every step value at once equals the distance computed one value at a time
    model = CoordinateAscent(regularized=True, slack=0.5)
    rng = np.random.default_rng(3)
    cases = [
        (np.array([0.0, 0.0, 0.4]), 2, np.array([0.0, 0.1])),  # a zero norm, refused
        (np.array([0.5, 0.3]), 0, np.array([-0.5569528267941042])),  # squared as an array, 1 ulp off
    ]
    for n_feat in (2, 3, 17, 300):
        w = rng.normal(size=n_feat)
        cases.append((w, int(rng.integers(n_feat)), rng.normal(size=40) * 10.0 ** rng.integers(-3, 2, 40)))
    for w, f, new_values in cases:
        u = 1.0 / w.shape[0]
        rest_abs = np.abs(w).sum() - abs(w[f])
        rest = np.delete(w, f)
        expected = []
        for v in new_values:
            norm = rest_abs + abs(v)
            expected.append(np.sqrt(((rest / norm - u) ** 2).sum() + (v / norm - u) ** 2) if norm > 0 else np.inf)
        np.testing.assert_array_equal(model._penalty(w, f, new_values), 0.5 * np.array(expected))
    assert model._penalty(*cases[0])[0] == np.inf
