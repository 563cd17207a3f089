from django.urls import path

from facts import views

urlpatterns = [
    path("", views.fact_list_view, name="memory"),
    path("chart/", views.chart_view, name="memory-chart"),
    path("add/", views.fact_create_view, name="memory-add"),
    path("bulk/", views.fact_bulk_view, name="memory-bulk"),
    path("undo/<int:undo_id>/", views.fact_undo_view, name="memory-undo"),
    path("recall/", views.recall_view, name="memory-recall"),
    path("embeddings/", views.embeddings_view, name="memory-embeddings"),
    path("embeddings/backfill/", views.backfill_view, name="memory-backfill"),
    path("settings/", views.settings_view, name="memory-settings"),
    path("<int:fact_id>/", views.fact_view, name="memory-fact"),
    path("<int:fact_id>/edit/", views.fact_edit_view, name="memory-fact-edit"),
    path("<int:fact_id>/delete/", views.fact_delete_view, name="memory-fact-delete"),
    path("<int:fact_id>/tags/", views.fact_tags_view, name="memory-fact-tags"),
]
