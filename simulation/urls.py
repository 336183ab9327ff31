from django.urls import path

from simulation import views

app_name = "simulation"

urlpatterns = [
    path("", views.RunListView.as_view(), name="run_list"),
    path("runs/new/", views.RunCreateView.as_view(), name="run_create"),
    path("runs/<int:pk>/", views.RunDetailView.as_view(), name="run_detail"),
    path("runs/<int:pk>/cancel/", views.RunCancelView.as_view(), name="run_cancel"),
    path("runs/<int:pk>/delete/", views.RunDeleteView.as_view(), name="run_delete"),
    path("sweeps/", views.SweepListView.as_view(), name="sweep_list"),
    path("sweeps/new/", views.SweepCreateView.as_view(), name="sweep_create"),
    path("sweeps/study/", views.StudyCreateView.as_view(), name="study_create"),
    path("sweeps/<int:pk>/", views.SweepDetailView.as_view(), name="sweep_detail"),
    path("sweeps/<int:pk>/cancel/", views.SweepCancelView.as_view(), name="sweep_cancel"),
    path("sweeps/<int:pk>/delete/", views.SweepDeleteView.as_view(), name="sweep_delete"),
    path("sweeps/<int:pk>/results.csv", views.SweepResultsCSVView.as_view(),
         name="sweep_results_csv"),
    path("sweeps/<int:pk>/results.json", views.SweepResultsJSONView.as_view(),
         name="sweep_results_json"),
    path("reproduction/", views.ReproductionView.as_view(), name="reproduction"),
    path("reproduction/start/", views.ReproductionStartView.as_view(),
         name="reproduction_start"),
]
