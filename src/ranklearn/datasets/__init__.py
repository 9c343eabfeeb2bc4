"""ranklearn.datasets: synthetic ranking data and the LETOR fold layout."""

from ranklearn.datasets._letor import SPLIT_FILES, LetorSplits, load_letor_fold
from ranklearn.datasets._synthetic import make_ranking, make_ranking_splits

__all__ = ["SPLIT_FILES", "LetorSplits", "load_letor_fold", "make_ranking", "make_ranking_splits"]
