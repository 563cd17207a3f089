from django.urls import path

from facts import views

urlpatterns = [
    path("", views.index, name="memory"),
]
