from django.urls import path

from dashboard import views

app_name = "dashboard"

urlpatterns = [
    path("", views.OverviewView.as_view(), name="home"),
    path("glossary/", views.GlossaryView.as_view(), name="glossary"),
    path("search/", views.SearchView.as_view(), name="search"),
]
