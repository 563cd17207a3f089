from django.urls import path

from facts import views

urlpatterns = [
    path("", views.fact_list_view, name="memory"),
    path("chart/", views.chart_view, name="memory-chart"),
    path("recall/", views.recall_view, name="memory-recall"),
    path("embeddings/", views.embeddings_view, name="memory-embeddings"),
    path("embeddings/backfill/", views.backfill_view, name="memory-backfill"),
    path("settings/", views.settings_view, name="memory-settings"),
    path("<int:fact_id>/", views.fact_view, name="memory-fact"),
    path("<int:fact_id>/edit/", views.fact_edit_view, name="memory-fact-edit"),
    path("<int:fact_id>/delete/", views.fact_delete_view, name="memory-fact-delete"),
]
