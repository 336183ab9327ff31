from rest_framework.routers import SimpleRouter

from allocation.api import views

router = SimpleRouter(trailing_slash=True)
router.register("machines", views.MachineViewSet, basename="machine")
router.register("nodes", views.NodeViewSet, basename="node")

urlpatterns = router.urls
