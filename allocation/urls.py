from django.urls import path

from allocation.views import exports
from allocation.views import jobs as job_views
from allocation.views import machines as machine_views

app_name = "allocation"

urlpatterns = [
    path("machines/new/", machine_views.MachineCreateView.as_view(), name="machine_create"),
    path("machines/<str:name>/", machine_views.MachineDetailView.as_view(),
         name="machine_detail"),
    path("machines/<str:name>/nodes/", machine_views.NodeListView.as_view(), name="node_list"),
    path("machines/<str:name>/nodes.csv", exports.NodeCSVView.as_view(), name="node_csv"),
    path("machines/<str:name>/nodes/state/", machine_views.NodeStateView.as_view(),
         name="node_state"),
    path("machines/<str:name>/slurm-sync/", machine_views.SlurmSyncView.as_view(),
         name="slurm_sync"),
    path("settings/", machine_views.SiteSettingsView.as_view(), name="site_settings"),
    path("machines/<str:name>/jobs/new/", job_views.JobSubmitView.as_view(), name="job_submit"),
    path("machines/<str:name>/compare/", job_views.ComparePoliciesView.as_view(),
         name="compare"),
    path("jobs/", job_views.JobListView.as_view(), name="job_list"),
    path("jobs.csv", exports.JobCSVView.as_view(), name="job_csv"),
    path("jobs/<int:pk>/", job_views.JobDetailView.as_view(), name="job_detail"),
    path("jobs/<int:pk>/release/", job_views.JobReleaseView.as_view(), name="job_release"),
]
