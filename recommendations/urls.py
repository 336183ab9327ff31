from django.urls import path

from recommendations import views

app_name = "recommendations"

urlpatterns = [
    path("recommend/", views.RecommendFormView.as_view(), name="recommend"),
    path("recommendations/", views.RecommendationListView.as_view(),
         name="recommendation_list"),
    path("recommendations/<int:pk>/", views.RecommendationDetailView.as_view(),
         name="recommendation_detail"),
    path("recommendations/<int:pk>/accept/", views.RecommendationAcceptView.as_view(),
         name="recommendation_accept"),
    path("recommendations/calibrations/", views.CalibrationListView.as_view(),
         name="calibration_list"),
    path("recommendations/calibrations/start/", views.CalibrationStartView.as_view(),
         name="calibration_start"),
    path("recommendations/calibrations/<int:pk>/", views.CalibrationDetailView.as_view(),
         name="calibration_detail"),
    path("recommendations/calibrations/<int:pk>/cancel/", views.CalibrationCancelView.as_view(),
         name="calibration_cancel"),
]
