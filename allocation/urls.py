from django.urls import path

from allocation import health_views, job_views, recommend_views, views

app_name = "allocation"

urlpatterns = [
    path("", views.OverviewView.as_view(), name="home"),
    path("glossary/", views.GlossaryView.as_view(), name="glossary"),
    path("machines/new/", views.MachineCreateView.as_view(), name="machine_create"),
    path("machines/<str:name>/", views.MachineDetailView.as_view(), name="machine_detail"),
    path("machines/<str:name>/nodes/", views.NodeListView.as_view(), name="node_list"),
    path("machines/<str:name>/nodes/state/", views.NodeStateView.as_view(), name="node_state"),
    path("health/", health_views.HealthIndexView.as_view(), name="health_index"),
    path("machines/<str:name>/health/", health_views.MachineHealthView.as_view(),
         name="machine_health"),
    path("machines/<str:name>/health/drain/", health_views.DrainSuspectView.as_view(),
         name="health_drain"),
    path("machines/<str:name>/health/estimate/", health_views.StartEstimationView.as_view(),
         name="health_estimate"),
    path("machines/<str:name>/health/nodes/<str:hostname>/",
         health_views.NodeHealthPageView.as_view(), name="node_health"),
    path("estimation-runs/<int:pk>/", health_views.EstimationRunPageView.as_view(),
         name="estimation_run"),
    path("spares/", health_views.SparesPageView.as_view(), name="spares"),
    path("benchmarks/upload/", health_views.BenchmarkUploadView.as_view(),
         name="benchmark_upload"),
    path("jobs/<int:pk>/select-fastest/", health_views.SelectFastestPageView.as_view(),
         name="select_fastest"),
    path("settings/", views.SiteSettingsView.as_view(), name="site_settings"),
    path("machines/<str:name>/jobs/new/", job_views.JobSubmitView.as_view(), name="job_submit"),
    path("machines/<str:name>/compare/", job_views.ComparePoliciesView.as_view(),
         name="compare"),
    path("recommend/", recommend_views.RecommendFormView.as_view(), name="recommend"),
    path("recommendations/", recommend_views.RecommendationListView.as_view(),
         name="recommendation_list"),
    path("recommendations/<int:pk>/", recommend_views.RecommendationDetailView.as_view(),
         name="recommendation_detail"),
    path("recommendations/<int:pk>/accept/",
         recommend_views.RecommendationAcceptView.as_view(), name="recommendation_accept"),
    path("jobs/", job_views.JobListView.as_view(), name="job_list"),
    path("jobs/<int:pk>/", job_views.JobDetailView.as_view(), name="job_detail"),
    path("jobs/<int:pk>/release/", job_views.JobReleaseView.as_view(), name="job_release"),
]
