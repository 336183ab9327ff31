from django.urls import path

from whatif import views

app_name = "whatif"

urlpatterns = [
    path("", views.WhatIfListView.as_view(), name="study_list"),
    path("new/", views.WhatIfCreateView.as_view(), name="study_create"),
    path("demo/", views.WhatIfDemoStartView.as_view(), name="demo"),
    path("<int:pk>/", views.WhatIfDetailView.as_view(), name="study_detail"),
    path("<int:pk>/cancel/", views.WhatIfCancelView.as_view(), name="study_cancel"),
    path("<int:pk>/delete/", views.WhatIfDeleteView.as_view(), name="study_delete"),
    path("<int:pk>/results.csv", views.WhatIfCSVView.as_view(), name="study_csv"),
    path("<int:pk>/results.json", views.WhatIfJSONView.as_view(), name="study_json"),
]
