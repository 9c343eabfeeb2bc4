"""ranklearn.clicks: click logs, click simulators and propensity estimation (learning from clicks)."""

from ranklearn.clicks.aggregate import ClickCounts, ClickTrainingSet
from ranklearn.clicks.log import ClickLog
from ranklearn.clicks.models import DCM, PBM, UBM, Cascade, ClickModel, TrustBias
from ranklearn.clicks.simulation import simulate

__all__ = [
    "DCM",
    "PBM",
    "UBM",
    "Cascade",
    "ClickCounts",
    "ClickLog",
    "ClickModel",
    "ClickTrainingSet",
    "TrustBias",
    "simulate",
]
