from rest_framework.routers import SimpleRouter

from whatif.api import views

router = SimpleRouter(trailing_slash=True)
router.register("whatif", views.WhatIfStudyViewSet, basename="whatif")

urlpatterns = router.urls
