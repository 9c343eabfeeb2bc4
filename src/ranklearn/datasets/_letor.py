"""The standard LETOR fold layout: ``<root>/FoldN/{train,vali,test}.txt``."""

from __future__ import annotations

from os import PathLike
from pathlib import Path
from typing import Any, NamedTuple

from ranklearn.data.dataset import RankingDataset
from ranklearn.data.svmlight import load_svmlight


class LetorSplits(NamedTuple):
    """Train, validation and test sets of one fold."""

    train: RankingDataset
    vali: RankingDataset
    test: RankingDataset


#: the files of a LETOR fold folder, in the order train, validation, test
SPLIT_FILES = ("train.txt", "vali.txt", "test.txt")


def load_letor_fold(root: str | PathLike[str], fold: int | str, **load_kwargs: Any) -> LetorSplits:
    """Load ``<root>/Fold<fold>/{train,vali,test}.txt`` (LETOR 3.0/4.0, MSLR, Yahoo layouts).

    Parameters
    ----------
    root : str or PathLike
        Folder holding ``Fold1``, ``Fold2``, ... (e.g. ``.../MQ2008``).
    fold : int or str
        Fold number (``1``) or folder name (``"Fold1"``).
    **load_kwargs
        Passed to :func:`ranklearn.data.load_svmlight` (``sparse``, ``dtype``, ``regroup``...).

    Returns
    -------
    LetorSplits
        ``(train, vali, test)``. All three get the same ``n_features`` (the largest
        feature id of the three files unless ``n_features`` is given), so a model
        trained on one applies to the others.

    Raises
    ------
    FileNotFoundError
        If the fold folder or one of the three files is missing; the message lists
        what is missing and what the folder holds.
    """
    folder = Path(root) / (fold if isinstance(fold, str) else f"Fold{fold}")
    if not folder.is_dir():
        found = sorted(p.name for p in Path(root).glob("Fold*")) if Path(root).is_dir() else []
        raise FileNotFoundError(
            f"no fold folder {str(folder)!r}"
            + (f"; {str(root)!r} has {found}" if found else f"; {str(root)!r} has no Fold* folders")
        )
    paths = [folder / name for name in SPLIT_FILES]
    missing = [p.name for p in paths if not p.is_file()]
    if missing:
        raise FileNotFoundError(
            f"fold folder {str(folder)!r} lacks {missing} (has {sorted(p.name for p in folder.iterdir())}); "
            f"expected {list(SPLIT_FILES)}"
        )
    sets = [load_svmlight(p, **load_kwargs) for p in paths]
    widest = max(d.n_features for d in sets)
    if "n_features" not in load_kwargs and any(d.n_features != widest for d in sets):
        # a split whose highest features are all missing is narrower: read it again at full width
        sets = [d if d.n_features == widest else load_svmlight(p, n_features=widest, **load_kwargs)
                for d, p in zip(sets, paths)]
    return LetorSplits(*sets)
