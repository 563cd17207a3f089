from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.templatetags.static import static
from django.urls import include, path
from django.views.generic import RedirectView

from memoryhub import views
from memoryhub.api import api
from memoryhub.surface.mcp_server import mcp_view

urlpatterns = [
    path("", views.home_view, name="home"),
    path("home/health/", views.home_health_view, name="home-health"),
    path("login/", auth_views.LoginView.as_view(redirect_authenticated_user=True), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("api/", api.urls),
    path("mcp", mcp_view, name="mcp"),
    path("v1/<path:rest>", views.chat_elsewhere, name="chat-elsewhere"),
    path("admin/", admin.site.urls),
    # Browsers ask for /favicon.ico where a page names no icon (the API's JSON, files).
    path("favicon.ico", RedirectView.as_view(url=static("img/favicon.svg"), permanent=True)),
    path("", include("teams.urls")),
    path("agents/preview/", views.chat_preview_view, name="agents-preview"),
    path("memory/forget/", views.forget_view, name="forget"),
    path("memory/reviews/", views.reviews_view, name="reviews"),
    path("memory/import/", views.memory_import_view, name="memory-import"),
    path("jobs/<int:job_id>/", views.job_view, name="job"),
    path("settings/export-person/", views.person_export_view, name="export-person"),
    path("memory/", include("facts.urls")),
    path("codegraph/", include("codegraph.urls")),
    path("wiki/", include("wiki.urls")),
    path("graph/", include("concepts.urls")),
]

handler400 = "memoryhub.views.bad_request"
handler403 = "memoryhub.views.permission_denied"
handler404 = "memoryhub.views.page_not_found"
# 500 stays Django's own view: it renders templates/500.html without the request, so a
# fault in the database or a context processor cannot break the error page too.
