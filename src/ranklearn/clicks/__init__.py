"""ranklearn.clicks: click logs, click simulators and propensity estimation (learning from clicks)."""

from ranklearn.clicks.aggregate import ClickCounts, ClickTrainingSet
from ranklearn.clicks.log import ClickLog
from ranklearn.clicks.models import DCM, PBM, UBM, Cascade, ClickModel, TrustBias
from ranklearn.clicks.propensity import Propensity, estimate_propensity
from ranklearn.clicks.simulation import simulate
from ranklearn.clicks.validation import ipw_dcg, ipw_eval_set, ipw_labels

__all__ = [
    "DCM",
    "PBM",
    "UBM",
    "Cascade",
    "ClickCounts",
    "ClickLog",
    "ClickModel",
    "ClickTrainingSet",
    "Propensity",
    "TrustBias",
    "estimate_propensity",
    "ipw_dcg",
    "ipw_eval_set",
    "ipw_labels",
    "simulate",
]
