"""ranklearn.clicks: click logs, click simulators and propensity estimation (learning from clicks)."""

from ranklearn.clicks.aggregate import ClickCounts, ClickTrainingSet
from ranklearn.clicks.log import ClickLog

__all__ = ["ClickCounts", "ClickLog", "ClickTrainingSet"]
