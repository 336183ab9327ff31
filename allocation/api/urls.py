from django.urls import path
from rest_framework.routers import SimpleRouter

from allocation.api import health, jobs, recommendations, views

router = SimpleRouter(trailing_slash=True)
router.register("machines", views.MachineViewSet, basename="machine")
router.register("nodes", views.NodeViewSet, basename="node")
router.register("jobs", jobs.JobViewSet, basename="job")
router.register("recommendations", recommendations.RecommendationViewSet,
                basename="recommendation")

router.register("benchmarks", health.BenchmarkResultViewSet, basename="benchmark")
router.register("estimates", health.EstimateViewSet, basename="estimate")
router.register("estimation-runs", health.EstimationRunViewSet, basename="estimation-run")

urlpatterns = [
    *router.urls,
    path("partitions/properties/", jobs.PartitionPropertiesView.as_view(),
         name="partition-properties"),
    path("spares/", health.SparesView.as_view(), name="spares"),
    path("select-fastest/", health.SelectFastestView.as_view(), name="select-fastest"),
    path("node-health/", health.NodeHealthView.as_view(), name="node-health"),
]
