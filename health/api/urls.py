from django.urls import path
from rest_framework.routers import SimpleRouter

from health.api import views

router = SimpleRouter(trailing_slash=True)
router.register("benchmarks", views.BenchmarkResultViewSet, basename="benchmark")
router.register("estimates", views.EstimateViewSet, basename="estimate")
router.register("estimation-runs", views.EstimationRunViewSet, basename="estimation-run")

urlpatterns = [
    *router.urls,
    path("spares/", views.SparesView.as_view(), name="spares"),
    path("select-fastest/", views.SelectFastestView.as_view(), name="select-fastest"),
    path("node-health/", views.NodeHealthView.as_view(), name="node-health"),
]
