from django.urls import path

from codegraph import views

urlpatterns = [
    path("", views.index, name="codegraph"),
    path("add/", views.add_folder, name="codegraph-add"),
    path("projects/<int:project_id>/scan/", views.scan, name="codegraph-scan"),
    path("projects/<int:project_id>/progress/", views.progress, name="codegraph-progress"),
    path("projects/<int:project_id>/delete/", views.delete, name="codegraph-delete"),
    path("search/", views.search, name="codegraph-search"),
    path("callers/", views.callers, name="codegraph-callers"),
    path("imports/", views.imports, name="codegraph-imports"),
]
