"""DaskLambdaMART on a LocalCluster (2 worker processes, 1 thread each): the same model as one machine."""

from __future__ import annotations

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

from ranklearn.dask import DaskLambdaMART, QueryStraddleError  # noqa: E402
from ranklearn.dask import _gather as _real_gather  # noqa: E402
from ranklearn.io import load_model  # noqa: E402
from ranklearn.metrics import get_metric  # noqa: E402
from ranklearn.models.lambdamart import LambdaMART  # noqa: E402

NDCG10 = get_metric("ndcg@10")
TREE_FIELDS = ("feature", "bin_threshold", "missing_left", "left", "right", "count")


@pytest.fixture(scope="module")
def client():
    with (
        distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster,
        distributed.Client(cluster) as c,
    ):
        yield c


def _dense(ds):
    return np.asarray(ds.X.todense() if hasattr(ds.X, "todense") else ds.X, dtype=np.float32)


@pytest.fixture(scope="module")
def mq2008(shared_data):
    from ranklearn.datasets import load_letor_fold

    return [(_dense(s), s.y, s.qid, s.ptr) for s in load_letor_fold(shared_data / "MQ2008", 1)]


def _at_queries(X, y, q, ptr, n_parts):
    """Dask arrays cut into ``n_parts`` partitions at query boundaries (uneven sizes)."""
    cuts = ptr[np.linspace(0, len(ptr) - 1, n_parts + 1).astype(int)]
    rows = tuple(np.diff(cuts).tolist())
    return da.from_array(X, chunks=(rows, -1)), da.from_array(y, chunks=(rows,)), da.from_array(q, chunks=(rows,))


def _assert_same_trees(ours, ref):
    assert len(ours.trees_) == len(ref.trees_)
    for a, b in zip(ours.trees_, ref.trees_):
        for name in TREE_FIELDS:
            np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
        # leaf values and gains differ only by the order of float sums across partitions
        np.testing.assert_allclose(a.value, b.value, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(a.threshold, b.threshold, rtol=0)


def test_same_trees_and_test_predictions_as_one_machine_on_mq2008(client, mq2008):
    (Xtr, ytr, qtr, ptr), (Xva, yva, qva, pva), (Xte, yte, qte, pte) = mq2008
    # 31 leaves: small nodes where two features cut the rows alike (equal gains up to rounding)
    params = dict(n_estimators=20, num_leaves=31, random_state=0, early_stopping_rounds=10)
    ref = LambdaMART(**params).fit(Xtr, ytr, qtr, eval_set=[(Xva, yva, qva)])
    dX, dy, dq = _at_queries(Xtr, ytr, qtr, ptr, 3)
    eX, ey, eq = _at_queries(Xva, yva, qva, pva, 2)
    ours = DaskLambdaMART(client=client, **params).fit(dX, dy, dq, eval_set=[(eX, ey, eq)])

    _assert_same_trees(ours, ref)
    assert ours.best_iteration_ == ref.best_iteration_ and ours.n_iter_ == ref.n_iter_
    np.testing.assert_allclose(ours.evals_result_["valid_0"]["ndcg@10"], ref.evals_result_["valid_0"]["ndcg@10"], atol=1e-9)
    lazy = ours.predict(_at_queries(Xte, yte, qte, pte, 2)[0])
    assert isinstance(lazy, da.Array)  # nothing computed yet
    pred = lazy.compute()
    expect = ref.predict(Xte)
    assert np.abs(pred - expect).max() <= 1e-6
    # several partitions per worker: partitions are not workers
    assert len(dX.chunks[0]) > len(client.scheduler_info()["workers"])
    assert NDCG10.mean(yte, pred, pte) == pytest.approx(NDCG10.mean(yte, expect, pte), abs=1e-6)


@pytest.mark.parametrize("leaf_order", ["gain", "deviance"])
def test_bagging_feature_subsampling_and_weights_draw_like_one_machine(client, mq2008, leaf_order):
    Xtr, ytr, qtr, ptr = mq2008[0]
    w = np.random.default_rng(3).uniform(0.5, 2.0, len(ytr))
    params = dict(n_estimators=8, num_leaves=7, random_state=5, bagging_fraction=0.6, feature_fraction=0.5,
                  bin_subsample=3000, objective="ranknet", leaf_order=leaf_order)  # fmt: skip
    ref = LambdaMART(**params).fit(Xtr, ytr, qtr, sample_weight=w)
    dX, dy, dq = _at_queries(Xtr, ytr, qtr, ptr, 4)
    ours = DaskLambdaMART(client=client, **params).fit(dX, dy, dq, sample_weight=da.from_array(w, chunks=dy.chunks))
    # the bin edges come from the same 3000-row sample, gathered from the workers
    np.testing.assert_array_equal(ours.bin_mapper_.edges_, ref.bin_mapper_.edges_)
    _assert_same_trees(ours, ref)


def test_dask_dataframe_with_group_sizes_keeps_feature_names(client, mq2008):
    pd = pytest.importorskip("pandas")
    dd = pytest.importorskip("dask.dataframe")
    Xtr, ytr, qtr, ptr = mq2008[0]
    names = [f"feat_{i}" for i in range(Xtr.shape[1])]
    params = dict(n_estimators=3, num_leaves=7, random_state=2)
    ref = LambdaMART(**params).fit(pd.DataFrame(Xtr, columns=names), ytr, group=np.diff(ptr))
    dX, dy, _ = _at_queries(Xtr, ytr, qtr, ptr, 2)
    frame = dd.from_dask_array(dX, columns=names)
    ours = DaskLambdaMART(client=client, **params).fit(frame, dd.from_dask_array(dy), group=np.diff(ptr))
    assert list(ours.feature_names_in_) == names
    _assert_same_trees(ours, ref)
    np.testing.assert_allclose(ours.predict(frame).compute(), ref.predict(pd.DataFrame(Xtr, columns=names)), atol=1e-9)

def test_the_client_waits_once_a_tree_the_workers_exchange_the_histograms(client, monkeypatch):
    import ranklearn.dask as rd

    rng = np.random.default_rng(4)
    q = np.repeat(np.arange(60), 10)
    X, y = rng.normal(size=(600, 5)), rng.integers(0, 3, 600).astype(float)
    waits = []
    monkeypatch.setattr(rd, "_gather", lambda *a, **k: waits.append(1) or _real_gather(*a, **k))
    marks = []
    model = DaskLambdaMART(client=client, n_estimators=3, num_leaves=7, min_samples_leaf=5, random_state=0).fit(
        da.from_array(X, chunks=(300, 5)), da.from_array(y, chunks=300), da.from_array(q, chunks=300),
        callbacks=[lambda i, total, results: marks.append(len(waits))],
    )
    assert [b - a for a, b in zip(marks, marks[1:])] == [1, 1]  # the client waits once a tree
    assert (model.trees_[1].left >= 0).sum() == 6  # the tree was grown to its 7 leaves


def test_the_same_partitions_on_the_same_workers_give_the_same_model_bit_for_bit(client, mq2008):
    Xtr, ytr, qtr, ptr = mq2008[0]
    # persisted: both fits find each partition on the same worker (lazy blocks may be computed
    # elsewhere each time, and another grouping of partitions on workers adds sums in another order)
    data = client.persist(_at_queries(Xtr, ytr, qtr, ptr, 3))
    distributed.wait(data)
    fits = [DaskLambdaMART(client=client, n_estimators=5, num_leaves=15, random_state=0).fit(*data) for _ in range(2)]
    for a, b in zip(*(f.trees_ for f in fits)):
        for name in (*TREE_FIELDS, "value", "gain"):
            np.testing.assert_array_equal(getattr(a, name), getattr(b, name))


def test_a_query_straddling_two_partitions_is_named(client):
    rng = np.random.default_rng(0)
    q = np.repeat([7, 8, 9], 10)
    X, y = rng.normal(size=(30, 3)), rng.integers(0, 3, 30).astype(float)
    chunks = (15, 15)  # query 8 holds rows 10..19
    with pytest.raises(QueryStraddleError, match=r"query 8 of X straddles partitions 0 and 1") as info:
        DaskLambdaMART(client=client, n_estimators=2).fit(
            da.from_array(X, chunks=(chunks, 3)), da.from_array(y, chunks=chunks), da.from_array(q, chunks=chunks)
        )
    assert (info.value.query, info.value.what, info.value.partitions) == (8, "X", (0, 1))


def test_objectives_not_computed_query_by_query_are_refused(client):
    with pytest.raises(ValueError, match="objective='xendcg' is not supported by DaskLambdaMART"):
        DaskLambdaMART(client=client, objective="xendcg").check_params()


def test_to_local_and_save_give_the_single_machine_model(client, mq2008, tmp_path):
    Xtr, ytr, qtr, ptr = mq2008[0]
    Xte = mq2008[2][0]
    dX, dy, dq = _at_queries(Xtr, ytr, qtr, ptr, 2)
    ours = DaskLambdaMART(client=client, n_estimators=5, num_leaves=7, random_state=1).fit(dX, dy, dq)
    local = ours.to_local()
    assert type(local) is LambdaMART
    assert local.get_params() == {k: v for k, v in ours.get_params().items() if k not in ("client", "worker_timeout")}
    expect = ours.predict(da.from_array(Xte, chunks=(1000, -1))).compute()
    np.testing.assert_array_equal(local.predict(Xte), expect)
    np.testing.assert_array_equal(ours.predict(Xte), expect)  # a NumPy array predicts on the client
    yte, qte = mq2008[2][1], mq2008[2][2]
    assert ours.score(Xte, yte, qid=qte) == local.score(Xte, yte, qid=qte)  # score passes predict the queries
    # contributions: the workers' counts are the trees' covers, so a Dask model explains as its local copy
    phi = ours.predict_contributions(Xte)
    np.testing.assert_array_equal(phi, local.predict_contributions(Xte))
    np.testing.assert_allclose(phi.sum(axis=1), expect, rtol=1e-9, atol=1e-12)
    ours.save(tmp_path / "dask.json")
    local.save(tmp_path / "local.json")
    assert (tmp_path / "dask.json").read_bytes() == (tmp_path / "local.json").read_bytes()
    loaded = load_model(tmp_path / "dask.json")
    assert type(loaded) is LambdaMART
    np.testing.assert_array_equal(loaded.predict(Xte), expect)


def test_read_svmlight_reads_files_on_the_workers_as_partitions(client, shared_data, tmp_path):
    from ranklearn.dask import read_svmlight
    from ranklearn.data import load_svmlight

    src = shared_data / "MQ2008" / "Fold1" / "vali.txt"
    lines = src.read_bytes().splitlines(keepends=True)
    ref = load_svmlight(src)
    cut = [0, int(ref.ptr[50]), int(ref.ptr[120]), len(lines)]  # at query boundaries (one row a line)
    for i in range(3):
        (tmp_path / f"part-{i}.txt").write_bytes(b"".join(lines[cut[i] : cut[i + 1]]))
    X, y, q = read_svmlight(str(tmp_path / "part-*.txt"), client=client)
    assert X.chunks[0] == tuple(np.diff(cut))
    np.testing.assert_array_equal(X.compute(), _dense(ref))
    np.testing.assert_array_equal(y.compute(), ref.y)
    np.testing.assert_array_equal(q.compute(), np.repeat(ref.query_ids, np.diff(ref.ptr)))


def test_read_svmlight_numbers_query_file_groups_per_file_apart(client, tmp_path):
    from ranklearn.dask import read_svmlight

    for i in range(2):  # LightGBM layout: no qid in the lines, group sizes in <file>.query
        (tmp_path / f"p{i}.txt").write_text("1 1:0.5\n0 2:1\n2 1:3\n")
        (tmp_path / f"p{i}.txt.query").write_text("2\n1\n")
    X, y, q = read_svmlight([tmp_path / "p0.txt", tmp_path / "p1.txt"], client=client)
    assert q.compute().tolist() == [0, 0, 1, 2, 2, 3]
    assert X.shape == (6, 2)


def test_read_svmlight_bad_file_raises_the_loaders_error_on_the_client(client, tmp_path):
    from ranklearn.dask import read_svmlight
    from ranklearn.exceptions import DataFormatError

    (tmp_path / "a.txt").write_text("1 qid:1 1:0.5\n")
    (tmp_path / "b.txt").write_text("1 qid:2 1:0.5\n0 qid:2 1:zz\n")
    with pytest.raises(DataFormatError, match=r"b\.txt:2: .*'1:zz'") as info:
        read_svmlight([tmp_path / "a.txt", tmp_path / "b.txt"], client=client)
    assert info.value.line == 2
    with pytest.raises(FileNotFoundError, match="no file matches"):
        read_svmlight(str(tmp_path / "none-*.txt"), client=client)


def test_read_svmlight_relative_paths_are_the_clients(client, tmp_path, monkeypatch):
    # the workers run in another folder (here: the one pytest started in; with --scheduler, the
    # workers' own): a relative path was looked up there, "No such file or directory"
    from ranklearn.dask import read_svmlight
    from ranklearn.exceptions import DataFormatError

    (tmp_path / "a.txt").write_text("1 qid:1 1:0.5\n0 qid:1 1:0.25\n")
    (tmp_path / "b.txt").write_text("1 qid:2 1:0.5\n0 qid:2 1:zz\n")
    monkeypatch.chdir(tmp_path)
    X, y, q = read_svmlight("a.txt", client=client)
    assert X.compute().tolist() == [[0.5], [0.25]]
    with pytest.raises(DataFormatError, match=r"^b\.txt:2: ") as info:  # named as typed
        read_svmlight(["a.txt", "b.txt"], client=client)
    assert info.value.path == "b.txt"


def test_read_svmlight_returns_the_position_sidecars_of_its_files(client, tmp_path, monkeypatch):
    from ranklearn.dask import read_svmlight
    from ranklearn.exceptions import DataFormatError

    (tmp_path / "a.txt").write_text("1 qid:1 1:0.5\n0 qid:1 1:0.25\n2 qid:2 1:1\n")
    (tmp_path / "b.txt").write_text("0 qid:3 1:2\n1 qid:3 1:3\n")
    (tmp_path / "a.txt.position").write_text("2\n1\n1\n")
    (tmp_path / "b.txt.position").write_text("1\n2\n")
    monkeypatch.chdir(tmp_path)
    parts = read_svmlight(["a.txt", "b.txt"], client=client)
    X, y, q = parts  # unpacked as before
    assert parts.position.compute().tolist() == [2, 1, 1, 1, 2] and parts.position.chunks == X.chunks[:1]
    assert parts.position_files == ["a.txt.position", "b.txt.position"]
    (tmp_path / "b.txt.position").write_text("1\n0\n")
    with pytest.raises(DataFormatError, match=r"^b\.txt\.position:2: "):  # named as typed
        read_svmlight(["a.txt", "b.txt"], client=client)
    (tmp_path / "b.txt.position").unlink()
    with pytest.raises(DataFormatError, match=r"no position file 'b\.txt\.position' while 'a\.txt\.position' exists"):
        read_svmlight(["a.txt", "b.txt"], client=client)
    (tmp_path / "a.txt.position").unlink()
    none = read_svmlight(["a.txt", "b.txt"], client=client)
    assert none.position is None and none.position_files == []


def test_read_svmlight_returns_the_weight_sidecars_of_its_files(client, tmp_path, monkeypatch):
    from ranklearn.dask import read_svmlight
    from ranklearn.exceptions import DataFormatError

    (tmp_path / "a.txt").write_text("1 qid:1 1:0.5\n0 qid:1 1:0.25\n2 qid:2 1:1\n")
    (tmp_path / "b.txt").write_text("0 qid:3 1:2\n1 qid:3 1:3\n")
    (tmp_path / "a.txt.weight").write_text("2\n1.5\n1\n")
    (tmp_path / "b.txt.weight").write_text("0\n3\n")
    monkeypatch.chdir(tmp_path)
    parts = read_svmlight(["a.txt", "b.txt"], client=client)
    assert parts.weight.compute().tolist() == [2, 1.5, 1, 0, 3] and parts.weight.chunks == parts.X.chunks[:1]
    assert parts.weight_files == ["a.txt.weight", "b.txt.weight"] and parts.position is None
    (tmp_path / "b.txt.weight").write_text("1\n-3\n")
    with pytest.raises(DataFormatError, match=r"^b\.txt\.weight:2: a weight must be >= 0"):  # named as typed
        read_svmlight(["a.txt", "b.txt"], client=client)
    (tmp_path / "b.txt.weight").write_text("1\n")
    with pytest.raises(DataFormatError, match=r"^b\.txt\.weight: 1 weights for 2 rows in b\.txt;"):
        read_svmlight(["a.txt", "b.txt"], client=client)
    (tmp_path / "b.txt.weight").unlink()
    with pytest.raises(DataFormatError, match=r"no weight file 'b\.txt\.weight' while 'a\.txt\.weight' exists"):
        read_svmlight(["a.txt", "b.txt"], client=client)


def test_positions_reach_every_peers_objective_with_their_rows(client, tmp_path):
    import pickle
    import uuid

    class Record:  # defined here: sent to the workers by value; each peer writes what it saw
        def __init__(self, folder):
            self.folder, self.done = str(folder), False

        def gradients(self, scores, y, ptr, *, side=None):
            if not self.done:
                with open(f"{self.folder}/{uuid.uuid4().hex}.pkl", "wb") as fh:
                    pickle.dump((y, ptr, side), fh)
                self.done = True
            return scores - y, np.ones_like(scores)

    rng = np.random.default_rng(2)
    qid = np.concatenate([rng.permutation(np.repeat(np.arange(6), 5)), rng.permutation(np.repeat(np.arange(6, 12), 5))])
    X, row, position = rng.normal(size=(60, 3)), np.arange(60, dtype=float), rng.integers(1, 30, 60)
    chunks = (30, 30)  # each partition holds its queries, rows shuffled among them
    DaskLambdaMART(client=client, objective=Record(tmp_path), n_estimators=2, num_leaves=3, min_samples_leaf=2).fit(
        da.from_array(X, chunks=(chunks, 3)), da.from_array(row, chunks=chunks), da.from_array(qid, chunks=chunks),
        position=da.from_array(position, chunks=chunks),
    )
    seen = []
    for f in tmp_path.glob("*.pkl"):
        y, ptr, side = pickle.loads(f.read_bytes())
        ids = y.astype(int)
        assert not np.array_equal(ids, np.sort(ids))  # the peer's rows were regrouped by query
        np.testing.assert_array_equal(side["position"], position[ids])
        assert all(len(set(qid[ids[a:b]])) == 1 for a, b in zip(ptr[:-1], ptr[1:]))  # grouped by query
        seen.extend(ids.tolist())
    assert sorted(seen) == list(range(60))  # every row, once, with its position
    with pytest.warns(UserWarning, match="ignores position=: objective 'ranknet' does not read it"):
        DaskLambdaMART(client=client, objective="ranknet", n_estimators=1, num_leaves=3).fit(
            da.from_array(X, chunks=(chunks, 3)), da.from_array(row, chunks=chunks), da.from_array(qid, chunks=chunks),
            position=da.from_array(position, chunks=chunks),
        )


# ---------------------------------------------------------------------- neural rankers on one worker
def _clicks_on_dask(n_parts=2):
    """PBM clicks (eta 1) of a logging ranker sorting by feature 1 (unrelated to relevance,
    feature 0): the rows (one per distinct session, weighted by its count) as Dask arrays cut at
    query boundaries, the NumPy rows, and a test set."""
    from ranklearn.clicks import PBM, ClickTrainingSet, simulate
    from ranklearn.data import from_arrays

    def letor(n_queries, seed):
        rng = np.random.default_rng(seed)
        X = rng.normal(size=(n_queries * 10, 3)).astype(np.float32)
        return from_arrays(X, np.clip(np.round(X[:, 0] * 1.2 + 1.5), 0, 4), qid=np.repeat(np.arange(n_queries), 10))

    train, test = letor(100, 0), letor(100, 1)
    rows = ClickTrainingSet.per_pattern(simulate(train, train.X[:, 1], PBM(eta=1.0), n_sessions=1500, seed=0), train)
    starts = np.flatnonzero(np.r_[True, np.diff(rows.qid) != 0])
    cut = int(starts[len(starts) // 2])
    chunks = ((cut, len(rows.qid) - cut),)
    on_dask = {name: da.from_array(getattr(rows, name), chunks=chunks) for name in ("y", "qid", "position", "sample_weight")}
    on_dask["X"] = da.from_array(rows.X, chunks=(chunks[0], -1))
    return on_dask, rows, test


@pytest.mark.parametrize("model", ["listnet-dla", "ranknet-regression-em", "lambdarank-ipw"])
def test_neural_click_estimators_fit_on_one_worker_as_on_one_machine(client, model, tmp_path):
    """A Dask neural fit gathers the partitions on one worker and runs the single-machine fit
    there: the same network, learned propensities, evaluations and stopping as a local fit on the
    same rows, each epoch's results at the client's callbacks, a lazy predict, the plain file."""
    from ranklearn.dask import DaskLambdaRank, DaskListNet, DaskRankNet
    from ranklearn.models import LambdaRank, ListNet, RankNet
    from ranklearn.neural.losses import DLALoss, IPWLoss, RegressionEMLoss

    dask_class, local_class, loss = {
        "listnet-dla": (DaskListNet, ListNet, DLALoss),
        "ranknet-regression-em": (DaskRankNet, RankNet, RegressionEMLoss),
        "lambdarank-ipw": (DaskLambdaRank, LambdaRank, lambda: IPWLoss(propensity=(1.0, 0.8, 0.6, 0.5, 0.4))),
    }[model]
    d, rows, test = _clicks_on_dask()
    eval_q = np.repeat(np.arange(100), 10)
    settings = dict(hidden=(8,), n_estimators=6, random_state=0)
    seen = []

    def callback(iteration, total, results):
        seen.append((iteration, total, results))

    callback.end = lambda message: seen.append(message)
    ours = dask_class(client=client, **settings, loss=loss()).fit(
        d["X"], d["y"], d["qid"], position=d["position"], sample_weight=d["sample_weight"],
        eval_set=[(da.from_array(test.X, chunks=(500, -1)), test.y, eval_q)], callbacks=[callback],
    )  # fmt: skip
    ref = local_class(**settings, loss=loss()).fit(
        rows.X, rows.y, rows.qid, position=rows.position, sample_weight=rows.sample_weight,
        eval_set=[(test.X, test.y, eval_q)],
    )  # fmt: skip
    assert [s[:2] for s in seen[:-1]] == [(i, 6) for i in range(1, ref.n_iter_ + 1)]
    assert [s[2]["valid_0"]["ndcg@10"] for s in seen[:-1]] == ref.evals_result_["valid_0"]["ndcg@10"]
    assert isinstance(seen[-1], str) and "kept epoch" in seen[-1]
    assert (ours.n_iter_, ours.best_iteration_) == (ref.n_iter_, ref.best_iteration_)
    np.testing.assert_allclose(ours.position_bias_["propensity"], ref.position_bias_["propensity"], rtol=1e-6)
    lazy = ours.predict(da.from_array(test.X, chunks=(300, -1)))
    assert isinstance(lazy, da.Array)
    np.testing.assert_allclose(lazy.compute(), ref.predict(test.X), rtol=1e-6, atol=1e-7)
    ours.save(tmp_path / "m.json")
    loaded = load_model(tmp_path / "m.json")
    assert type(loaded) is local_class and type(ours.to_local()) is local_class
    np.testing.assert_array_equal(loaded.predict(test.X), ours.predict(test.X))


def test_a_dask_neural_fit_with_a_per_query_normalize_predicts_with_the_queries(client):
    from ranklearn.dask import DaskListNet
    from ranklearn.models import ListNet

    d, rows, test = _clicks_on_dask()
    settings = dict(hidden=(), n_estimators=2, random_state=0, normalize="query-zscore")
    ours = DaskListNet(client=client, **settings).fit(d["X"], d["y"], d["qid"])
    ref = ListNet(**settings).fit(rows.X, rows.y, rows.qid)
    q = np.repeat(np.arange(100), 10)
    got = ours.predict(da.from_array(test.X, chunks=(300, -1)), qid=da.from_array(q, chunks=300)).compute()
    np.testing.assert_allclose(got, ref.predict(test.X, qid=q), rtol=1e-6, atol=1e-7)
    with pytest.raises(ValueError, match="needs the rows' queries"):
        ours.predict(da.from_array(test.X, chunks=(300, -1))).compute()


def test_a_dask_neural_fit_raises_the_single_machine_error_on_the_client(client):
    from ranklearn.dask import DaskListNet
    from ranklearn.neural.losses import DLALoss

    d, _, _ = _clicks_on_dask()
    with pytest.raises(ValueError, match="needs position="):
        DaskListNet(client=client, hidden=(), n_estimators=1, loss=DLALoss()).fit(d["X"], d["y"], d["qid"])
    with pytest.raises(ValueError, match="hidden"):
        DaskListNet(client=client, hidden=(-1,)).fit(d["X"], d["y"], d["qid"])


def test_a_ctrl_c_stops_a_dask_neural_fit_at_its_epoch_end_keeping_the_best(client):
    """A client callback raising KeyboardInterrupt (as a Ctrl-C) after epoch 2 stops the worker's
    fit at the end of an epoch: the model keeps the epochs so far as a local Ctrl-C does."""
    from ranklearn.dask import DaskListNet
    from ranklearn.models import ListNet

    d, rows, test = _clicks_on_dask()

    def interrupt_after_epoch_2(iteration, total, results):
        if iteration == 2:
            raise KeyboardInterrupt

    model = DaskListNet(client=client, hidden=(4,), n_estimators=40, random_state=0)
    with pytest.raises(KeyboardInterrupt):
        model.fit(d["X"], d["y"], d["qid"], callbacks=[interrupt_after_epoch_2])
    assert model.interrupted_ and 2 <= model.n_iter_ < 40
    ref = ListNet(hidden=(4,), n_estimators=model.n_iter_, random_state=0).fit(rows.X, rows.y, rows.qid)
    np.testing.assert_allclose(model.predict(test.X), ref.predict(test.X), rtol=1e-6, atol=1e-7)


def test_a_warm_started_dask_neural_fit_continues_from_its_network(client):
    from ranklearn.dask import DaskListNet
    from ranklearn.models import ListNet

    d, rows, test = _clicks_on_dask()
    settings = dict(hidden=(4,), n_estimators=2, random_state=0)
    ours = DaskListNet(client=client, **settings).fit(d["X"], d["y"], d["qid"])
    ref = ListNet(**settings).fit(rows.X, rows.y, rows.qid)
    ours.set_params(warm_start=True, n_estimators=3).fit(d["X"], d["y"], d["qid"])
    ref.set_params(warm_start=True, n_estimators=3).fit(rows.X, rows.y, rows.qid)
    fresh = ListNet(**(settings | {"n_estimators": 3})).fit(rows.X, rows.y, rows.qid)
    np.testing.assert_allclose(ours.predict(test.X), ref.predict(test.X), rtol=1e-6, atol=1e-7)
    assert not np.allclose(ours.predict(test.X), fresh.predict(test.X))


def test_a_dask_neural_fit_raises_its_warnings_and_a_callbacks_error_on_the_client(client):
    from ranklearn.dask import DaskListNet

    d, rows, _ = _clicks_on_dask()
    with pytest.warns(UserWarning, match="ListNet ignores position="):  # raised on the worker, said here
        DaskListNet(client=client, hidden=(), n_estimators=1).fit(d["X"], d["y"], d["qid"], position=d["position"])
    calls = []

    def fails_at_epoch_2(iteration, total, results):
        calls.append(iteration)
        if iteration == 2:
            raise ValueError("the callback's own error")

    model = DaskListNet(client=client, hidden=(), n_estimators=30, random_state=0)
    with pytest.raises(ValueError, match="the callback's own error"):
        model.fit(d["X"], d["y"], d["qid"], callbacks=[fails_at_epoch_2])
    assert calls == [1, 2] and not model.__sklearn_is_fitted__()


def test_a_silent_or_lost_worker_stops_a_dask_neural_fit_naming_it(client):
    """A worker that stops answering: WorkerTimeoutError after worker_timeout; the fitting worker
    killed mid-fit (the scheduler would start the fit again on the other): WorkerLostError."""
    import os
    import time

    from ranklearn.dask import DaskListNet, WorkerLostError, WorkerTimeoutError

    d, _, _ = _clicks_on_dask()
    workers = list(client.scheduler_info()["workers"])
    hang = 8.0

    async def deaf(seconds):
        time.sleep(seconds)  # blocks the worker's event loop: alive, but it answers nothing

    def hang_after_epoch_2(iteration, total, results):
        if iteration == 2:
            client.run(deaf, hang, workers=workers, wait=False)

    model = DaskListNet(client=client, hidden=(16,), n_estimators=40, worker_timeout=3)
    with pytest.raises(WorkerTimeoutError, match=r"the worker tcp://\S+ has not answered in 3 s \(worker_timeout\) after epoch"):
        model.fit(d["X"], d["y"], d["qid"], callbacks=[hang_after_epoch_2])
    time.sleep(hang)  # the workers wake

    async def die():
        os._exit(1)

    def kill_the_fitting_worker_after_epoch_2(iteration, total, results):
        if iteration == 2:
            busy = [w for w, keys in client.processing().items() if any("_fit_on_worker" in str(k) for k in keys)]
            client.run(die, workers=busy, wait=False)

    with pytest.raises(WorkerLostError, match=r"the worker tcp://\S+ fitting the network was lost after epoch"):
        DaskListNet(client=client, hidden=(16,), n_estimators=40).fit(
            d["X"], d["y"], d["qid"], callbacks=[kill_the_fitting_worker_after_epoch_2]
        )
    client.wait_for_workers(2, timeout=60)  # the nanny restarts the killed worker


def test_ctrl_c_keeps_the_trees_so_far(client):
    rng = np.random.default_rng(1)
    q = np.repeat(np.arange(40), 10)
    X, y = rng.normal(size=(400, 4)), rng.integers(0, 3, 400).astype(float)

    def interrupt_after_tree_3(iteration, total, results):
        if iteration == 3:
            raise KeyboardInterrupt

    model = DaskLambdaMART(client=client, n_estimators=10, min_samples_leaf=5, random_state=0)
    with pytest.raises(KeyboardInterrupt):
        model.fit(da.from_array(X, chunks=(200, 4)), da.from_array(y, chunks=200), da.from_array(q, chunks=200),
                  callbacks=[interrupt_after_tree_3])  # fmt: skip
    assert model.interrupted_ and model.n_iter_ == 3 and len(model.trees_) == 3
    ref = LambdaMART(n_estimators=3, min_samples_leaf=5, random_state=0).fit(X, y, q)
    np.testing.assert_allclose(model.predict(X), ref.predict(X), atol=1e-9)

def test_a_hung_worker_stops_the_fit_after_worker_timeout_naming_it(client):
    import time

    from ranklearn.dask import WorkerLostError, WorkerTimeoutError

    rng = np.random.default_rng(0)
    q = np.repeat(np.arange(40), 10)
    X, y = rng.normal(size=(400, 4)), rng.integers(0, 3, 400).astype(float)
    workers = list(client.scheduler_info()["workers"])
    hang = 12.0
    data = da.from_array(X, chunks=(200, 4)), da.from_array(y, chunks=200), da.from_array(q, chunks=200)
    DaskLambdaMART(client=client, n_estimators=1).fit(*data)  # kernels loaded on the workers: no slow first call

    async def deaf(seconds):
        time.sleep(seconds)  # blocks the worker's event loop: alive, but it answers nothing

    def hang_after_tree_2(iteration, total, results):
        if iteration == 2:
            client.run(deaf, hang, workers=workers, wait=False)

    # without the timeout the fit would wait for the workers to wake and then succeed: the
    # error itself shows it did not wait
    with pytest.raises(WorkerTimeoutError, match=r"tree 3: worker tcp://\S+ holding partitions? [\d, ]+ did not answer "
                       r"within worker_timeout=3 s") as info:  # fmt: skip
        DaskLambdaMART(client=client, n_estimators=5, min_samples_leaf=5, worker_timeout=3).fit(
            *data, callbacks=[hang_after_tree_2]
        )
    assert isinstance(info.value, WorkerLostError)  # one except clause catches both
    time.sleep(hang)  # the next test needs the workers awake


def _stall_next_exchange(seconds):
    """On a worker: its peer's next exchange of sums sleeps first (once)."""
    import time

    from ranklearn.collective import StarComm

    real = StarComm.allreduce

    def stalled(self, values):
        StarComm.allreduce = real
        time.sleep(seconds)
        return real(self, values)

    StarComm.allreduce = stalled


def test_a_worker_silent_mid_tree_is_named_not_the_one_waiting_for_it(client):
    import time

    from ranklearn.dask import WorkerTimeoutError

    rng = np.random.default_rng(0)
    q = np.repeat(np.arange(40), 10)
    X, y = rng.normal(size=(400, 4)), rng.integers(0, 3, 400).astype(float)
    workers = sorted(client.scheduler_info()["workers"])
    parts = [client.persist((da.from_array(X[r], chunks=(200, 4)), da.from_array(y[r], chunks=200),
                             da.from_array(q[r], chunks=200)), workers=[w])  # fmt: skip
             for r, w in ((slice(0, 200), workers[0]), (slice(200, 400), workers[1]))]
    data = [da.concatenate([p[i] for p in parts]) for i in range(3)]
    distributed.wait(data)
    DaskLambdaMART(client=client, n_estimators=1).fit(*data)  # kernels loaded on the workers
    silent = workers[1]  # the worker of partition 1
    hang = 6.0

    def stall_after_tree_2(iteration, total, results):
        if iteration == 2:
            client.run(_stall_next_exchange, hang, workers=[silent])

    with pytest.raises(WorkerTimeoutError, match=rf"tree 3: worker {silent} holding partition 1 "):
        DaskLambdaMART(client=client, n_estimators=5, min_samples_leaf=5, worker_timeout=3).fit(
            *data, callbacks=[stall_after_tree_2]
        )
    time.sleep(hang)  # the next test needs the worker free


def test_a_killed_worker_stops_the_fit_naming_it_and_the_tree(client):
    """Last in the module: the nanny restarts the killed worker, but its shard is gone."""
    import os
    import signal

    from ranklearn.dask import WorkerLostError

    rng = np.random.default_rng(0)
    q = np.repeat(np.arange(40), 10)
    X, y = rng.normal(size=(400, 4)), rng.integers(0, 3, 400).astype(float)
    pids = client.run(os.getpid)

    def kill_after_tree_2(iteration, total, results):
        if iteration == 2:
            for pid in pids.values():  # every worker: whichever holds a shard
                os.kill(pid, signal.SIGKILL)

    with pytest.raises(WorkerLostError, match=r"tree 3: worker tcp://\S+ holding partitions? [\d, ]+ was lost"):
        DaskLambdaMART(client=client, n_estimators=5, min_samples_leaf=5).fit(
            da.from_array(X, chunks=(200, 4)), da.from_array(y, chunks=200), da.from_array(q, chunks=200),
            callbacks=[kill_after_tree_2],
        )


def _sleep_then(block, seconds):
    import time

    time.sleep(seconds)  # the worker's one thread is busy: the partition's shard is not made
    return block


def test_a_worker_hung_while_making_the_shards_stops_the_fit_after_worker_timeout(client):
    import time

    from ranklearn.dask import WorkerTimeoutError

    rng = np.random.default_rng(0)
    q = np.repeat(np.arange(40), 10)
    X, y = rng.normal(size=(400, 4)).astype(np.float32), rng.integers(0, 3, 400).astype(float)
    hang = 12.0
    slow = da.from_array(X, chunks=(200, 4)).map_blocks(_sleep_then, hang, dtype=np.float32)
    start = time.monotonic()
    with pytest.raises(WorkerTimeoutError, match=r"worker tcp://\S+ making partition \d of X did not finish "
                       r"within worker_timeout=3 s"):  # fmt: skip
        DaskLambdaMART(client=client, n_estimators=2, min_samples_leaf=5, worker_timeout=3).fit(
            slow, da.from_array(y, chunks=200), da.from_array(q, chunks=200)
        )
    time.sleep(max(0.0, hang - (time.monotonic() - start)))  # the next tests need the workers free


def test_each_shard_is_made_where_its_partition_was_annotated_to_be_made(client):
    import dask

    from ranklearn.dask import _shard

    rng = np.random.default_rng(0)
    workers = sorted(client.scheduler_info()["workers"])
    where = [workers[1], workers[0], workers[0], workers[1]]  # not the order the scheduler would pick
    Xs, ys, qs = [], [], []
    for i, w in enumerate(where):
        with dask.annotate(workers=[w], allow_other_workers=False):
            X = dask.delayed(rng.normal(size=(50, 3)).astype(np.float32).copy)()
            Xs.append(da.from_delayed(X, (50, 3), np.float32))
        ys.append(da.from_array(rng.integers(0, 3, 50).astype(float), chunks=50))
        qs.append(da.from_array(np.repeat(np.arange(5 * i, 5 * i + 5), 10), chunks=50))
    sharded = _shard(client, "train", da.concatenate(Xs), da.concatenate(ys), da.concatenate(qs), None, None, "X", 60)
    try:
        assert [s._address for s in sharded.shards] == where
    finally:
        client.cancel(sharded.futures)


def test_empty_partitions_are_skipped_and_errors_name_the_partition(client):
    rng = np.random.default_rng(4)
    q = np.repeat(np.arange(30), 10)
    X, y = rng.normal(size=(300, 4)), rng.integers(0, 3, 300).astype(float)
    params = dict(n_estimators=4, num_leaves=4, min_samples_leaf=2, random_state=0)
    local = LambdaMART(**params).fit(X, y, qid=q)
    # partitions of 0, 100, 0, 200 rows (a frame filtered after its split): "X is empty" before
    rows = (0, 100, 0, 200)
    dy, dq = da.from_array(y, chunks=(rows,)), da.from_array(q, chunks=(rows,))
    model = DaskLambdaMART(client=client, **params).fit(da.from_array(X, chunks=(rows, (4,))), dy, dq)
    np.testing.assert_allclose(model.predict(X), local.predict(X), rtol=0, atol=1e-12)
    bad = X.copy()
    bad[150, 2] = np.inf  # row 50 of the partition holding rows 100-299
    with pytest.raises(ValueError, match=r"partition 3 \(rows 100-299; its rows count from 0\): X contains inf at row 50"):
        DaskLambdaMART(client=client, **params).fit(da.from_array(bad, chunks=(rows, (4,))), dy, dq)


def test_per_row_vectors_of_the_wrong_length_or_of_unknown_chunks(client):
    rng = np.random.default_rng(5)
    q = np.repeat(np.arange(10), 10)
    X, y = rng.normal(size=(100, 3)), rng.integers(0, 3, 100).astype(float)
    dX = da.from_array(X, chunks=(50, 3))
    params = dict(n_estimators=3, num_leaves=4, min_samples_leaf=2)
    # a NumPy y one short failed inside dask ("Chunks do not add up to shape"), naming nothing
    for short in (y[:99], da.from_array(y[:99], chunks=50)):
        with pytest.raises(ValueError, match=r"^y has 99 values for the 100 rows of X$"):
            DaskLambdaMART(client=client, **params).fit(dX, short, q)
    with pytest.raises(ValueError, match=r"^qid has 99 values for the 100 rows of evaluation set 'v'$"):
        DaskLambdaMART(client=client, **params).fit(dX, y, q, eval_set=[(dX, y, q[:99])], eval_names=["v"])
    # a masked dask array has unknown chunk sizes (its shape says nan): counted, then used
    dy = da.from_array(y, chunks=50)
    keep = dy >= 0
    masked_X, masked_y = dX[keep], dy[keep]
    assert np.isnan(masked_X.shape[0]) and np.isnan(masked_y.shape[0])
    model = DaskLambdaMART(client=client, **params).fit(masked_X, masked_y, q)
    column = da.from_array(y[:, None], chunks=(50, 1))[keep]  # (nan, 1): counted before it is flattened
    assert np.isnan(column.shape[0])
    np.testing.assert_array_equal(DaskLambdaMART(client=client, **params).fit(dX, column, q).predict(X), model.predict(X))
    np.testing.assert_allclose(model.predict(X), LambdaMART(**params).fit(X, y, qid=q).predict(X), rtol=0, atol=1e-12)


def test_fit_on_files_the_user_already_computed(client, shared_data):
    # dask.compute(X, y, q) then fit(X, y, q) failed most times with "lost dependencies": fit
    # submitted the same keys unoptimized (other dependencies than the optimized compute's) while
    # the scheduler still held the old tasks. A race, so the flow runs three times.
    import dask

    from ranklearn.dask import read_svmlight

    files = [shared_data / "MQ2008" / f"Fold{k}" / "vali.txt" for k in (1, 2)]
    params = dict(n_estimators=3, num_leaves=4, random_state=0)
    for _ in range(3):
        X, y, q = read_svmlight(files, client=client)
        Xn, yn, qn = dask.compute(X, y, q)
        model = DaskLambdaMART(client=client, **params).fit(X, y, q)
        np.testing.assert_allclose(model.predict(Xn), LambdaMART(**params).fit(Xn, yn, qid=qn).predict(Xn), atol=1e-12)


@pytest.mark.parametrize("method", ["pairwise", "position_factors"])
def test_unbiased_gives_the_trees_and_bias_of_one_machine(client, method):
    """The position bias is updated from sums over every peer's rows (Objective.bias_statistics,
    allreduced): the same ratios or factors, hence the same trees, as one machine. Seed 6: with
    seed 5 and the factors' default regularization (1) two splits of a tree gain the same up to
    rounding, and the histogram sums' order across peers tips the tie (the factors stay equal)."""
    rng = np.random.default_rng(6)
    n_q = 60
    q = np.repeat(np.arange(n_q), 10)
    X = rng.normal(size=(n_q * 10, 4))
    position = np.tile(np.arange(1, 11), n_q)
    y = (rng.random(n_q * 10) < (X[:, 0] > 0) * 0.9 / position**0.7).astype(float)
    params = dict(n_estimators=8, num_leaves=7, min_samples_leaf=5, random_state=0, unbiased=method)
    ref = LambdaMART(**params).fit(X, y, q, position=position)
    ptr = np.arange(0, n_q * 10 + 1, 10)
    dX, dy, dq = _at_queries(X, y, q, ptr, 3)
    dpos = da.from_array(position, chunks=dy.chunks)
    ours = DaskLambdaMART(client=client, **params).fit(dX, dy, dq, position=dpos)
    _assert_same_trees(ours, ref)
    assert ours.position_bias_.keys() == ref.position_bias_.keys()
    for key, values in ref.position_bias_.items():
        np.testing.assert_array_equal(ours.position_bias_[key], values)  # kept on a grid: the same bits
    assert not np.allclose(next(iter(ref.position_bias_.values()))[1:], next(iter(ref.position_bias_.values()))[0])
    with pytest.raises(ValueError, match="needs position="):
        DaskLambdaMART(client=client, **params).fit(dX, dy, dq)


def test_clone_keeps_the_client_and_clones_the_other_parameters(client):
    from sklearn.base import clone

    from ranklearn.dask import DaskListNet
    from ranklearn.neural.losses import DLALoss

    for model in (DaskListNet(client=client, hidden=(4,), loss=DLALoss()), DaskLambdaMART(client=client, n_estimators=3)):
        copy = clone(model)
        assert copy.client is client and copy.get_params(deep=False).keys() == model.get_params(deep=False).keys()
    model = DaskListNet(client=client, loss=DLALoss())
    copied = clone(model).loss
    assert copied is not model.loss and type(copied) is DLALoss  # a copy of the loss
