from django.urls import path

from codegraph import views

urlpatterns = [
    path("", views.index, name="codegraph"),
]
