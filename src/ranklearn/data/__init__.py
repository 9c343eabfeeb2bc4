"""ranklearn.data: ranking datasets, SVMlight/LETOR files, query groups and normalization."""

from ranklearn.data.dataset import Query, RankingDataset, from_arrays, from_frame
from ranklearn.data.groups import group_ptr, regroup_order, sizes_to_ptr, take_queries
from ranklearn.data.normalize import Normalizer
from ranklearn.data.svmlight import format_svmlight, load_svmlight, save_svmlight
from ranklearn.exceptions import DataFormatError

__all__ = [
    "DataFormatError",
    "Normalizer",
    "Query",
    "RankingDataset",
    "format_svmlight",
    "from_arrays",
    "from_frame",
    "group_ptr",
    "load_svmlight",
    "regroup_order",
    "save_svmlight",
    "sizes_to_ptr",
    "take_queries",
]
