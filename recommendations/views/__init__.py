"""Pages of recommendations (submit, watch, accept) and of calibrations."""

from recommendations.views.calibrations import (
    CalibrationCancelView,
    CalibrationDetailView,
    CalibrationListView,
    CalibrationStartView,
)
from recommendations.views.recommendations import (
    RecommendationAcceptView,
    RecommendationDetailView,
    RecommendationListView,
    RecommendFormView,
    accuracy_rows,
)

__all__ = ["CalibrationCancelView", "CalibrationDetailView", "CalibrationListView",
           "CalibrationStartView", "RecommendFormView", "RecommendationAcceptView",
           "RecommendationDetailView", "RecommendationListView", "accuracy_rows"]
