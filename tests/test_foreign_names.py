"""Other tools' names: "ranklearn calls it ..." in Python and on the command line, one table."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from ranklearn.foreign_names import NAMES, hint, nearest
from ranklearn.models import LambdaMART, RandomForest
from ranklearn.registry import REGISTRY, names_markdown_table, option_flag
from _helpers import assert_one_line_error, run, small_data
from test_cli import small_files  # noqa: F401  (fixture)


def test_readme_holds_the_generated_table():
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    block = readme.split("<!-- names:start -->\n", 1)[1].split("\n<!-- names:end -->", 1)[0]
    assert block == names_markdown_table()  # regenerate: .venv/bin/python tools/readme_models.py


def test_every_name_the_table_gives_is_ranklearn_s():
    params = set()
    for spec in REGISTRY.values():
        try:
            params |= set(spec.load_class()._get_param_names())
        except ImportError:  # torch missing: the neural names are not checked here
            params |= {"hidden", "n_estimators"}
    fit_args = set(re.findall(r"fit\((\w+)=\)", names_markdown_table()))
    flags = {option_flag(p) for p in params} | {"--train", "--validate", "--test", "--save", "--model",
                                                "--validation-split", "--normalize", "--features"}  # fmt: skip
    for row in NAMES:
        if not row.ours:
            assert row.note.startswith("not taken"), row
        elif row.ours.startswith("fit("):
            assert row.ours[4:-2] in fit_args, row
        elif row.ours.startswith("--"):
            assert row.ours in flags, row
        elif " " not in row.ours:
            assert row.ours in params, row


@pytest.mark.parametrize(
    "cls, name, ours",
    [(LambdaMART, "min_child_samples", "min_samples_leaf (LightGBM's min_child_samples)"),
     (LambdaMART, "colsample_bytree", "feature_fraction (LightGBM's and XGBoost's colsample_bytree)"),
     (LambdaMART, "subsample", "bagging_fraction (LightGBM's and XGBoost's subsample; ranklearn draws whole queries)"),
     (LambdaMART, "reg_lambda", "l2_regularization (LightGBM's and XGBoost's reg_lambda)"),
     (LambdaMART, "num_boost_round", "n_estimators (LightGBM's and XGBoost's num_boost_round)"),
     (RandomForest, "colsample_bytree", "feature_fraction")],
)  # fmt: skip
def test_another_tools_parameter_name_says_ranklearn_s(cls, name, ours):
    with pytest.raises(TypeError, match=re.escape(f"{cls.__name__}.__init__() got an unexpected keyword argument "
                                                  f"'{name}': ranklearn calls it {ours}")):  # fmt: skip
        cls(**{name: 1})
    with pytest.raises(ValueError, match=re.escape(f"ranklearn calls it {ours}")):
        cls().set_params(**{name: 1})


def test_an_unknown_name_of_no_tool_stays_python_s_error():
    with pytest.raises(TypeError) as info:
        LambdaMART(bogus=1)
    assert str(info.value).endswith("got an unexpected keyword argument 'bogus'")
    assert RandomForest(subsample=0.5).subsample == 0.5  # the forest's own parameter: no hint


def test_fit_arguments_of_other_tools():
    X, y, qid = small_data()
    with pytest.raises(TypeError, match=r"fit\(\) got an unexpected keyword argument 'eval_at': ranklearn calls it metric"):
        LambdaMART(n_estimators=2).fit(X, y, qid, eval_at=[10])
    with pytest.raises(TypeError, match=r"ranklearn calls it fit\(eval_set=\) \(XGBoost's eval_qid; as \(X, y, qid\)"):
        LambdaMART(n_estimators=2).fit(X, y, qid, eval_set=[(X, y)], eval_qid=[qid])


def test_nearest_compares_names_without_dashes():
    flags = ["--n-estimators", "--loss", "--leaves", "--test", "--threads"]
    assert nearest("--bogus", flags) == []
    assert nearest("--leafs", flags)[0] == "--leaves"
    assert hint("-leaf", (), options={"num_leaves": "--leaves"}) == "ranklearn calls it --leaves (RankLib's -leaf)"


@pytest.mark.parametrize(
    "typed, said",
    [(["-tree", "5"], "No such option: -tree: ranklearn calls it --n-estimators (RankLib's -tree; with -ranker 8 "
                      "(random forest) -tree is trees_per_bag)"),
     (["--trees", "5"], "ranklearn calls it --n-estimators (earlier ranklearn's --trees; random-forest's trees per "
                        "bag: --trees-per-bag)"),
     (["--epochs", "5"], "ranklearn calls it --n-estimators (earlier ranklearn's --epochs; the networks' epochs) (see"),
     (["-leaf", "5"], "ranklearn calls it --leaves (RankLib's -leaf)"),
     (["--leaf", "5"], "No such option: --leaf: ranklearn calls it --leaves (RankLib's -leaf)"),
     (["--norm", "zscore"], "No such option: --norm: ranklearn calls it --normalize (RankLib's -norm;"),
     (["--objective", "rank_xendcg"], "'rank_xendcg' is not one of 'lambdarank', 'ranknet', 'squared_error', "
                                      "'xendcg': ranklearn calls it xendcg (LightGBM's rank_xendcg)"),
     (["--objective", "rank:pairwise"], ": ranklearn calls it ranknet (XGBoost's rank:pairwise)"),
     (["-shrinkage", "0.1"], "ranklearn calls it --learning-rate (RankLib's -shrinkage)"),
     (["-mls", "3"], "ranklearn calls it --min-leaf-samples (RankLib's -mls)"),
     (["-estop", "10"], "ranklearn calls it --early-stopping (RankLib's -estop)"),
     (["--min-child-samples", "3"], "ranklearn calls it --min-leaf-samples (LightGBM's min_child_samples)"),
     (["--num-leaves", "3"], "ranklearn calls it --leaves (LightGBM's num_leaves)"),
     (["--iterations", "3"], "ranklearn calls it --line-search-steps (earlier ranklearn's --iterations; coordinate "
                             "ascent's steps; trees, epochs or rounds: --n-estimators)"),
     (["--min-samples-leaf", "3"], "No such option: --min-samples-leaf: ranklearn calls it --min-leaf-samples"),
     (["--verbose", "1"], "ranklearn calls it the Python parameter verbose (no command-line option)"),
     (["--colsample-bytree", "0.5"], "ranklearn calls it --feature-fraction (LightGBM's and XGBoost's colsample_bytree)"),
     (["--leafs", "3"], "No such option: --leafs (nearest: --leaves"),
     (["--bogus"], "No such option: --bogus (see 'ranklearn train --help')")],
)  # fmt: skip
def test_cli_unknown_options_say_ranklearn_s_name(capsys, small_files, typed, said):  # noqa: F811
    code, _, err = run(capsys, "train", "--train", small_files["train"], "--model", "lambdamart", *typed)
    assert_one_line_error(code, err, said)
    assert "Possible options" not in err


@pytest.mark.parametrize(
    "name, old, said",
    [("random-forest", "n_bags", "n_estimators (earlier ranklearn's n_bags; a random forest's bags; its trees per bag "
                                 "are trees_per_bag)"),
     ("coordinate-ascent", "n_restarts", "n_estimators (earlier ranklearn's n_restarts; coordinate ascent's restarts)"),
     ("coordinate-ascent", "max_iterations", "line_search_steps (earlier ranklearn's max_iterations)"),
     ("ranknet", "epochs", "n_estimators (earlier ranklearn's epochs; the networks' epochs)")],
)  # fmt: skip
def test_a_name_the_vocabulary_replaced_says_today_s(name, old, said):
    cls = REGISTRY[name].load_class()
    with pytest.raises(TypeError, match=re.escape(f"got an unexpected keyword argument '{old}': ranklearn calls it {said}")):
        cls(**{old: 2})
    with pytest.raises(ValueError, match=re.escape(f"ranklearn calls it {said}")):
        cls().set_params(**{old: 2})
