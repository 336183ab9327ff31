from django.urls import path

from metrics import views

app_name = "metrics"

urlpatterns = [
    # No trailing slash: Prometheus's default metrics_path is exactly /metrics.
    path("metrics", views.metrics_view, name="metrics"),
]
