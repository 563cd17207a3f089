from django.urls import path

from concepts import views

urlpatterns = [
    path("", views.index, name="concepts"),
]
