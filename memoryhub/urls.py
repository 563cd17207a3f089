from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from memoryhub import views
from memoryhub.api import api

urlpatterns = [
    path("", views.home, name="home"),
    path("login/", auth_views.LoginView.as_view(redirect_authenticated_user=True), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("api/", api.urls),
    path("admin/", admin.site.urls),
    path("", include("teams.urls")),
    path("memory/", include("facts.urls")),
    path("codegraph/", include("codegraph.urls")),
    path("wiki/", include("wiki.urls")),
    path("graph/", include("concepts.urls")),
]
