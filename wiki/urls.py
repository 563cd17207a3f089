from django.urls import path

from wiki import views

urlpatterns = [
    path("", views.index, name="wiki"),
    path("new/", views.new_view, name="wiki-new"),
    path("preview/", views.preview_view, name="wiki-preview"),
    path("review/", views.review_view, name="wiki-review"),
    path("<int:page_id>/", views.page_view, name="wiki-page"),
    path("<int:page_id>/edit/", views.edit_view, name="wiki-edit"),
    path("<int:page_id>/history/", views.history_view, name="wiki-history"),
    path("<int:page_id>/diff/", views.diff_view, name="wiki-diff"),
    path("<int:page_id>/approve/", views.approve_view, name="wiki-approve"),
    path("<int:page_id>/reject/", views.reject_view, name="wiki-reject"),
    path(
        "<int:page_id>/revisions/<int:number>/restore/",
        views.restore_view,
        name="wiki-restore",
    ),
    path("<int:page_id>/delete/", views.delete_view, name="wiki-delete"),
]
