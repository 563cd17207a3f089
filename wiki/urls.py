from django.urls import path

from memoryhub.engine.config import feature_pages
from wiki import views

urlpatterns = feature_pages(
    "wiki",
    [
        path("", views.page_list_view, name="wiki"),
        path("new/", views.page_new_view, name="wiki-new"),
        path("preview/", views.preview_view, name="wiki-preview"),
        path("review/", views.review_queue_view, name="wiki-review"),
        path("<int:page_id>/", views.page_view, name="wiki-page"),
        path("<int:page_id>/edit/", views.page_edit_view, name="wiki-edit"),
        path("<int:page_id>/history/", views.page_history_view, name="wiki-history"),
        path("<int:page_id>/diff/", views.revision_diff_view, name="wiki-diff"),
        path("<int:page_id>/approve/", views.page_approve_view, name="wiki-approve"),
        path("<int:page_id>/reject/", views.page_reject_view, name="wiki-reject"),
        path(
            "<int:page_id>/revisions/<int:number>/restore/",
            views.revision_restore_view,
            name="wiki-restore",
        ),
        path("<int:page_id>/delete/", views.page_delete_view, name="wiki-delete"),
    ],
)
