"""Model files of every ranker whose parameters issue 30's vocabulary renames, written by the code before it."""
import json, sys
from pathlib import Path
import numpy as np
from ranklearn.datasets import make_ranking
from ranklearn.models.adarank import AdaRank
from ranklearn.models.coordinate_ascent import CoordinateAscent
from ranklearn.models.linear import LinearRegression
from ranklearn.models.mart import MART
from ranklearn.models.random_forest import RandomForest
from ranklearn.models.rankboost import RankBoost
from ranklearn.models.ranknet import RankNet
from ranklearn.models.lambdarank import LambdaRank
from ranklearn.models.listnet import ListNet

out = Path(sys.argv[1])
X, y, qid = make_ranking(24, 6, n_informative=4, docs_per_query=(8, 8), random_state=3, return_X_y=True)
X = np.asarray(X, dtype=np.float64)
ev = [(X[:64], y[:64], qid[:64])]
models = {
    "ranknet": RankNet(hidden=(4,), epochs=3, random_state=0),
    "lambdarank": LambdaRank(hidden=(4,), epochs=3, random_state=0),
    "listnet": ListNet(hidden=(4,), epochs=3, early_stopping_rounds="auto", random_state=0),
    "coordinate-ascent": CoordinateAscent(n_restarts=2, max_iterations=5, random_state=0),
    "random-forest": RandomForest(n_bags=3, n_estimators=2, num_leaves=4, min_samples_leaf=2, random_state=0),
    "adarank": AdaRank(n_estimators=6),
    "rankboost": RankBoost(n_estimators=6, n_thresholds=5),
    "linear": LinearRegression(),
    "mart": MART(n_estimators=30, num_leaves=4, random_state=0),
}
preds = {}
for name, m in models.items():
    m.fit(X, y, qid=qid, eval_set=ev)
    m.save(out / f"{name}.json")
    preds[name] = m.predict(X)
np.savez_compressed(out / "data.npz", X=X, **{k.replace("-", "_"): v for k, v in preds.items()})
