from rest_framework.routers import SimpleRouter

from simulation.api import views

router = SimpleRouter(trailing_slash=True)
router.register("simulation-runs", views.SimulationRunViewSet, basename="simulation-run")
router.register("sweeps", views.SweepViewSet, basename="sweep")

urlpatterns = router.urls
