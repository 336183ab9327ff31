from rest_framework.routers import SimpleRouter

from recommendations.api import views

router = SimpleRouter(trailing_slash=True)
router.register("recommendations", views.RecommendationViewSet, basename="recommendation")
router.register("calibrations", views.CalibrationViewSet, basename="calibration")

urlpatterns = router.urls
