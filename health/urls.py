from django.urls import path

from health import views

app_name = "health"

urlpatterns = [
    path("health/", views.HealthIndexView.as_view(), name="health_index"),
    path("machines/<str:name>/health/", views.MachineHealthView.as_view(),
         name="machine_health"),
    path("machines/<str:name>/health/drain/", views.DrainSuspectView.as_view(),
         name="health_drain"),
    path("machines/<str:name>/health/estimate/", views.StartEstimationView.as_view(),
         name="health_estimate"),
    path("machines/<str:name>/health/nodes/<str:hostname>/",
         views.NodeHealthPageView.as_view(), name="node_health"),
    path("estimation-runs/<int:pk>/", views.EstimationRunPageView.as_view(),
         name="estimation_run"),
    path("spares/", views.SparesPageView.as_view(), name="spares"),
    path("benchmarks/upload/", views.BenchmarkUploadView.as_view(), name="benchmark_upload"),
    path("jobs/<int:pk>/select-fastest/", views.SelectFastestPageView.as_view(),
         name="select_fastest"),
]
