from django.urls import path

from health.views import actions, pages

app_name = "health"

urlpatterns = [
    path("health/", pages.HealthIndexView.as_view(), name="health_index"),
    path("machines/<str:name>/health/", pages.MachineHealthView.as_view(),
         name="machine_health"),
    path("machines/<str:name>/health/drain/", actions.DrainSuspectView.as_view(),
         name="health_drain"),
    path("machines/<str:name>/health/estimate/", actions.StartEstimationView.as_view(),
         name="health_estimate"),
    path("machines/<str:name>/health/nodes/<str:hostname>/",
         pages.NodeHealthPageView.as_view(), name="node_health"),
    path("estimation-runs/<int:pk>/", pages.EstimationRunPageView.as_view(),
         name="estimation_run"),
    path("spares/", pages.SparesPageView.as_view(), name="spares"),
    path("benchmarks/upload/", actions.BenchmarkUploadView.as_view(), name="benchmark_upload"),
    path("jobs/<int:pk>/select-fastest/", actions.SelectFastestPageView.as_view(),
         name="select_fastest"),
]
