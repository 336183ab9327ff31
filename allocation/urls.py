from django.urls import path

from allocation import views

app_name = "allocation"

urlpatterns = [
    path("", views.MachineListView.as_view(), name="home"),
    path("machines/new/", views.MachineCreateView.as_view(), name="machine_create"),
    path("machines/<str:name>/", views.MachineDetailView.as_view(), name="machine_detail"),
    path("machines/<str:name>/nodes/", views.NodeListView.as_view(), name="node_list"),
    path("machines/<str:name>/nodes/state/", views.NodeStateView.as_view(), name="node_state"),
]
