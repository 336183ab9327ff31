from django.urls import path
from rest_framework.routers import SimpleRouter

from simulation.api import reproduction, views

router = SimpleRouter(trailing_slash=True)
router.register("simulation-runs", views.SimulationRunViewSet, basename="simulation-run")
router.register("sweeps", views.SweepViewSet, basename="sweep")

# Before the router: "sweeps/reproduction/" would otherwise match the sweep detail route.
urlpatterns = [
    path("sweeps/reproduction/", reproduction.ReproductionStartView.as_view(),
         name="sweep-reproduction-start"),
    path("sweeps/<int:pk>/reproduction/", reproduction.SweepReproductionView.as_view(),
         name="sweep-reproduction"),
    *router.urls,
]
