from django.urls import path
from rest_framework.routers import SimpleRouter

from allocation.api.views import jobs
from allocation.api.views import machines as views

router = SimpleRouter(trailing_slash=True)
router.register("machines", views.MachineViewSet, basename="machine")
router.register("nodes", views.NodeViewSet, basename="node")
router.register("jobs", jobs.JobViewSet, basename="job")

urlpatterns = [
    *router.urls,
    path("partitions/properties/", jobs.PartitionPropertiesView.as_view(),
         name="partition-properties"),
]
