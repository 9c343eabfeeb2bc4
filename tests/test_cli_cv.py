"""ranklearn cv: query-grouped folds of one file, LETOR fold folders, model options from train's table."""

from __future__ import annotations

import json

import numpy as np
import pytest

from ranklearn.cli._cv import parse_model_options
from ranklearn.data import load_svmlight, save_svmlight
from ranklearn.datasets import make_ranking, make_ranking_splits
from ranklearn.metrics import get_metric
from ranklearn.model_selection import cross_validate
from ranklearn.models import LambdaMART
from _helpers import assert_one_line_error, run


def test_parse_model_options_uses_train_names_and_types():
    assert parse_model_options("lambdamart", ["--n-estimators", "7", "--learning-rate", "0.2", "--seed", "3"]) == {
        "n_estimators": 7, "learning_rate": 0.2, "random_state": 3}  # fmt: skip
    with pytest.raises(ValueError, match="unknown option '--bogus'"):
        parse_model_options("lambdamart", ["--bogus", "1"])
    with pytest.raises(ValueError, match="--n-estimators takes a whole number"):
        parse_model_options("lambdamart", ["--n-estimators", "many"])
    with pytest.raises(ValueError, match="needs a value"):
        parse_model_options("lambdamart", ["--n-estimators"])
    with pytest.raises(ValueError, match="--hidden does not apply to lambdamart"):
        parse_model_options("lambdamart", ["--hidden", "8"])
    # a value out of the parameter's range or choices is named by its option, as train names it
    with pytest.raises(ValueError, match=r"^--n-estimators must be an int in the range \[1, inf\); got 0$"):
        parse_model_options("mart", ["--n-estimators", "0"])
    with pytest.raises(ValueError, match=r"^--leaf-order must be one of 'deviance', 'gain'; got 'size'$"):
        parse_model_options("mart", ["--leaf-order", "size"])


def test_folds_and_seeds_out_of_range_name_the_option(capsys, tmp_path):
    # numpy's "Seed must be between 0 and 2**32 - 1" and query_folds' "n_splits must be ..."
    path = tmp_path / "all.txt"
    save_svmlight(make_ranking(6, 4, n_informative=2, docs_per_query=(3, 5), random_state=0), path)
    code, _, err = run(capsys, "cv", "--model", "linear", "--data", path, "--folds", 7)
    assert_one_line_error(code, err, f"--folds 7 is more than the 6 queries of {path}")
    for seed in (-1, 2**32):
        code, _, err = run(capsys, "cv", "--model", "linear", "--data", path, "--split-seed", seed)
        assert_one_line_error(code, err, "'--split-seed'")


def test_a_bad_model_option_is_one_line_and_exit_2_before_the_data_is_read(capsys, tmp_path):
    code, out, err = run(capsys, "cv", "--model", "mart", "--data", tmp_path / "absent.txt", "--n-estimators", "0")
    assert code == 2 and out == ""
    assert err.strip() == "ranklearn: error: --n-estimators must be an int in the range [1, inf); got 0"


def test_cv_on_one_file_equals_cross_validate(capsys, tmp_path):
    ds = make_ranking(40, 6, n_informative=4, docs_per_query=(3, 10), random_state=1)
    path = tmp_path / "all.txt"
    save_svmlight(ds, path)
    code, out, err = run(capsys, "cv", "--model", "lambdamart", "--data", path, "--folds", 4, "--metric", "ndcg@5",
                         "--metric", "map", "--split-seed", 2, "--json", "--n-estimators", 4, "--leaves", 3)  # fmt: skip
    assert code == 0, err
    result = json.loads(out)
    back = load_svmlight(path)
    model = LambdaMART(n_estimators=4, num_leaves=3)
    ref = cross_validate(model, back.X, back.y, qid=back.qid, cv=4, metrics=["ndcg@5", "map"], random_state=2)
    for spec in ("ndcg@5", "map"):
        assert [result["folds"][f"fold {i}"][spec] for i in range(1, 5)] == list(ref[f"test_{spec}"])
        assert result["mean"][spec] == pytest.approx(ref[f"test_{spec}"].mean())
        assert result["std"][spec] == pytest.approx(ref[f"test_{spec}"].std(ddof=1))
    code, out, err = run(capsys, "cv", "--model", "lambdamart", "--data", path, "--folds", 4, "--n-estimators", 4)
    assert code == 0 and "mean ± std" in out and "fold 4" in out
    assert "fold 4: ran all 4 trees" in err  # progress on stderr, fold by fold
    code, _, err = run(capsys, "cv", "--model", "lambdamart", "--data", path, "--folds", 1)
    assert code == 2 and err.count("\n") == 1 and "'--folds'" in err and "1" in err
    code, _, err = run(capsys, "cv", "--model", "lambdamart", "--data", path, "--hidden", 3)
    assert code == 2 and err.count("\n") == 1 and "--hidden does not apply to lambdamart" in err


def test_cv_letor_folds(capsys, tmp_path):
    for n in (1, 2):
        folder = tmp_path / f"Fold{n}"
        folder.mkdir()
        splits = make_ranking_splits((30, 10, 10), n_features=6, n_informative=4, docs_per_query=(3, 10), random_state=n)
        for name, ds in zip(("train", "vali", "test"), splits):
            save_svmlight(ds, folder / f"{name}.txt")
    code, out, err = run(capsys, "cv", "--model", "lambdamart", "--letor-folds", tmp_path, "--metric", "ndcg@10",
                         "--json", "--n-estimators", 6, "--early-stopping", 2)  # fmt: skip
    assert code == 0, err
    result = json.loads(out)
    assert list(result["folds"]) == ["fold 1", "fold 2"]  # named as --folds names them
    train, vali, test = (load_svmlight(tmp_path / "Fold2" / f"{n}.txt") for n in ("train", "vali", "test"))
    model = LambdaMART(n_estimators=6, early_stopping_rounds=2).fit(
        train.X, train.y, qid=train.qid, eval_set=[(vali.X, vali.y, vali.qid)]
    )
    expected = get_metric("ndcg@10").mean(test.y, model.predict(test.X), test.ptr)
    assert result["folds"]["fold 2"]["ndcg@10"] == pytest.approx(expected, abs=1e-12)
    assert result["mean"]["ndcg@10"] == pytest.approx(np.mean([v["ndcg@10"] for v in result["folds"].values()]))
    code, _, err = run(capsys, "cv", "--model", "lambdamart", "--letor-folds", tmp_path / "Fold1")
    assert code == 2 and "no Fold1, Fold2" in err
    code, _, err = run(capsys, "cv", "--model", "lambdamart", "--letor-folds", tmp_path / "Fold1" / "test.txt")
    assert code == 2 and "test.txt: is a file; --letor-folds takes the folder" in err
    code, _, err = run(capsys, "cv", "--model", "lambdamart")
    assert code == 2 and "--data (with --folds) or --letor-folds" in err


def test_bad_values_are_named_by_the_files_line_before_any_fold(capsys, tmp_path):
    lines = [f"{q % 3} qid:{q} 1:{q}.5 2:0.25" for q in range(12) for _ in range(2)]
    lines[17] = "1 qid:8 1:nan 2:0.25"  # line 18; in a fold's arrays it is another row
    path = tmp_path / "d.txt"
    path.write_text("\n".join(lines) + "\n")
    code, out, err = run(capsys, "cv", "--model", "linear", "--data", path, "--folds", 3)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert f"{path}:18: feature 1 is NaN (missing); linear does not accept missing values" in err
    assert "fold" not in err  # refused before the first fold's progress
    code, _, err = run(capsys, "cv", "--model", "lambdamart", "--data", path, "--folds", 3, "--n-estimators", 2)
    assert code == 0, err  # LambdaMART learns where NaN goes
    lines[17], lines[4] = "1 qid:8 1:0.5 2:0.25", "-1 qid:2 1:2.5 2:0.25"
    path.write_text("\n".join(lines) + "\n")
    code, _, err = run(capsys, "cv", "--model", "lambdamart", "--data", path, "--folds", 3)
    assert code == 2 and f"{path}:5: labels must be >= 0 for the metrics that cv reports (this one is -1)" in err
    folder = tmp_path / "letor" / "Fold1"
    folder.mkdir(parents=True)
    for name in ("train.txt", "vali.txt"):
        (folder / name).write_text("\n".join(lines[:4]) + "\n")
    (folder / "test.txt").write_text("\n".join([*lines[:2], "0 qid:9 1:nan 2:1"]) + "\n")
    code, _, err = run(capsys, "cv", "--model", "ranknet", "--letor-folds", tmp_path / "letor")
    assert code == 2 and f"{folder / 'test.txt'}:3: feature 1 is NaN (missing); ranknet does not accept" in err
    # a negative label in a training file is the ranker's business (RankNet takes it): cv scores test files
    (folder / "test.txt").write_text("\n".join(lines[:4]) + "\n")
    (folder / "train.txt").write_text("\n".join([*lines[:4], "-1 qid:99 1:1 2:1", "1 qid:99 1:2 2:0"]) + "\n")
    code, _, err = run(capsys, "cv", "--model", "ranknet", "--letor-folds", tmp_path / "letor", "--n-estimators", 1)
    assert code == 0, err
    # a ranker that refuses it names it: the fold, then the ranker's words
    code, _, err = run(capsys, "cv", "--model", "lambdamart", "--letor-folds", tmp_path / "letor", "--n-estimators", 2)
    assert code == 2 and f"{folder}: labels must be >= 0 for ndcg lambdas (got -1)" in err and err.count("\n") == 1


def test_help(capsys):
    code, out, _ = run(capsys, "cv", "--help")
    assert code == 0 and "--letor-folds" in out and "RankLib" in out


def test_cv_save_models_writes_each_fold_model(capsys, tmp_path):
    from ranklearn.io import load_model
    from ranklearn.model_selection import query_folds

    splits = make_ranking_splits((30, 10, 10), n_features=6, n_informative=4, docs_per_query=(3, 10), random_state=5)
    path = tmp_path / "all.txt"
    save_svmlight(splits[0], path)
    out_dir = tmp_path / "models"
    code, out, err = run(capsys, "cv", "--model", "lambdamart", "--data", path, "--folds", 3, "--json",
                         "--save-models", out_dir, "--n-estimators", 4, "--seed", 0)  # fmt: skip
    assert code == 0, err
    result = json.loads(out)  # stdout stays the JSON alone
    assert sorted(p.name for p in out_dir.iterdir()) == ["fold-1.json", "fold-2.json", "fold-3.json"]
    ds = load_svmlight(path)
    for n, (train, test) in enumerate(query_folds(ds.qid, 3, random_state=0), start=1):
        model = load_model(out_dir / f"fold-{n}.json")
        scores = model.predict(ds.X[test])
        from ranklearn.data.groups import group_ptr

        assert get_metric("ndcg@10").mean(ds.y[test], scores, group_ptr(ds.qid[test])) == pytest.approx(
            result["folds"][f"fold {n}"]["ndcg@10"], abs=1e-12
        )
    (tmp_path / "file").write_text("x")
    code, _, err = run(capsys, "cv", "--model", "lambdamart", "--data", path, "--save-models", tmp_path / "file")
    assert code == 2 and "--save-models takes a folder" in err and err.count("\n") == 1


def test_cv_early_stopping_carves_validation_queries_from_each_training_part(capsys, tmp_path):
    from ranklearn.data.groups import group_ptr
    from ranklearn.model_selection import carve_queries, query_folds

    splits = make_ranking_splits((40, 10, 10), n_features=6, n_informative=4, docs_per_query=(3, 10), random_state=6)
    path = tmp_path / "all.txt"
    save_svmlight(splits[0], path)
    code, out, err = run(capsys, "cv", "--model", "lambdamart", "--data", path, "--folds", 3, "--json",
                         "--n-estimators", 30, "--learning-rate", 0.5, "--early-stopping", 3, "--seed", 0)  # fmt: skip
    assert code == 0, err
    assert "without a gain on 'vali'" in err  # each fold stopped on its carved validation part
    result = json.loads(out)
    ds = load_svmlight(path)
    for n, (train, test) in enumerate(query_folds(ds.qid, 3, random_state=0), start=1):
        keep = carve_queries(ds.qid[train], 0.8, 0)  # 80% of the training queries trained on, seeded
        vali, fit_rows = train[~keep], train[keep]
        assert np.unique(ds.qid[vali]).size == np.unique(ds.qid[train]).size - round(0.8 * np.unique(ds.qid[train]).size)
        model = LambdaMART(n_estimators=30, learning_rate=0.5, early_stopping_rounds=3, random_state=0).fit(
            ds.X[fit_rows], ds.y[fit_rows], qid=ds.qid[fit_rows], eval_set=[(ds.X[vali], ds.y[vali], ds.qid[vali])]
        )
        expected = get_metric("ndcg@10").mean(ds.y[test], model.predict(ds.X[test]), group_ptr(ds.qid[test]))
        assert result["folds"][f"fold {n}"]["ndcg@10"] == pytest.approx(expected, abs=1e-12)


def test_cv_normalize_as_ranklibs_kcv_with_norm(capsys, tmp_path):
    """cv ... --normalize query-zscore (RankLib's -kcv with -norm): each fold's model normalizes
    as train --normalize does; the figures equal cross_validate's with normalize=."""
    ds = make_ranking(30, 5, n_informative=3, docs_per_query=(3, 9), random_state=4)
    path = tmp_path / "all.txt"
    save_svmlight(ds, path)
    assert parse_model_options("linear", ["--normalize", "query-zscore"]) == {"normalize": "query-zscore"}
    with pytest.raises(ValueError, match="--normalize takes sum, zscore, linear, query-sum"):
        parse_model_options("linear", ["--normalize", "l2"])
    code, out, err = run(capsys, "cv", "--model", "linear", "--data", path, "--folds", 3, "--json",
                         "--normalize", "query-zscore")  # fmt: skip
    assert code == 0, err
    back = load_svmlight(path)
    from ranklearn.models.linear import LinearRegression

    ref = cross_validate(LinearRegression(normalize="query-zscore"), back.X, back.y, qid=back.qid, cv=3,
                         metrics=["ndcg@10"], random_state=0)  # fmt: skip
    plain = cross_validate(LinearRegression(), back.X, back.y, qid=back.qid, cv=3, metrics=["ndcg@10"], random_state=0)
    got = [json.loads(out)["folds"][f"fold {i}"]["ndcg@10"] for i in range(1, 4)]
    assert got == list(ref["test_ndcg@10"]) and got != list(plain["test_ndcg@10"])


def test_cv_train_metric_sets_the_rankers_metric_and_flags_take_no_value(capsys, tmp_path):
    """--train-metric is train's --metric (cv's own --metric is the reported one): the fold
    models are fitted for it; a boolean parameter is a flag, --x or --no-x."""
    from ranklearn.io import load_model

    splits = make_ranking_splits((30, 10, 10), n_features=6, n_informative=4, docs_per_query=(3, 10), random_state=5)
    path, out_dir = tmp_path / "all.txt", tmp_path / "models"
    save_svmlight(splits[0], path)
    code, _, err = run(capsys, "cv", "--model", "coordinate-ascent", "--data", path, "--folds", 2, "--metric", "ndcg@10",
                       "--train-metric", "map", "--save-models", out_dir, "--n-estimators", 1, "--regularized",
                       "--line-search-steps", 3, "--seed", 0)  # fmt: skip
    assert code == 0, err
    model = load_model(out_dir / "fold-1.json")
    assert (model.metric, model.regularized, model.line_search_steps) == ("map", True, 3)
    assert parse_model_options("adarank", ["--no-enqueue"]) == {"enqueue": False}
    code, _, err = run(capsys, "cv", "--model", "linear", "--data", path, "--train-metric", "nope@3")
    assert code == 2 and err.count("\n") == 1 and "nope@3" in err
