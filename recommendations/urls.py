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
]
