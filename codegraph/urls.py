from django.urls import path

from codegraph import views
from memoryhub.engine.config import feature_pages

urlpatterns = feature_pages(
    "codegraph",
    [
        path("", views.project_list_view, name="codegraph"),
        path("add/", views.project_add_view, name="codegraph-add"),
        path("projects/<int:project_id>/scan/", views.project_scan_view, name="codegraph-scan"),
        path(
            "projects/<int:project_id>/progress/",
            views.project_progress_view,
            name="codegraph-progress",
        ),
        path(
            "projects/<int:project_id>/delete/", views.project_delete_view, name="codegraph-delete"
        ),
        path("search/", views.symbol_search_view, name="codegraph-search"),
        path("callers/", views.symbol_callers_view, name="codegraph-callers"),
        path("imports/", views.file_imports_view, name="codegraph-imports"),
    ],
)
