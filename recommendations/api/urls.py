from rest_framework.routers import SimpleRouter

from recommendations.api import views

router = SimpleRouter(trailing_slash=True)
router.register("recommendations", views.RecommendationViewSet, basename="recommendation")

urlpatterns = router.urls
