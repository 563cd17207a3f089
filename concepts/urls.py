from django.urls import path

from concepts import views

urlpatterns = [
    path("", views.graph_view, name="graph"),
    path("data/", views.graph_data_view, name="graph-data"),
    path("stats/", views.graph_stats_view, name="graph-stats"),
    path("entities/<str:ref>/", views.graph_entity_view, name="graph-entity"),
    path("build/", views.graph_build_view, name="graph-build"),
    path("aliases/", views.alias_create_view, name="graph-alias-create"),
    path("aliases/<int:alias_id>/delete/", views.alias_delete_view, name="graph-alias-delete"),
]
