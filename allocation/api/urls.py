from django.urls import path
from rest_framework.routers import SimpleRouter

from allocation.api.views import jobs as job_views
from allocation.api.views import machines as machine_views

router = SimpleRouter(trailing_slash=True)
router.register("machines", machine_views.MachineViewSet, basename="machine")
router.register("nodes", machine_views.NodeViewSet, basename="node")
router.register("jobs", job_views.JobViewSet, basename="job")

urlpatterns = [
    *router.urls,
    path("partitions/properties/", job_views.PartitionPropertiesView.as_view(),
         name="partition-properties"),
]
