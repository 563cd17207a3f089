import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryhub.settings")
application = get_wsgi_application()

# Loaded here rather than on the first request, so that when gunicorn loads the
# application before forking its workers (runall: --preload) they share it: the URLconf,
# with every view, API and schema, and the local embedding model's query session (which
# the wiki scanner reads with, whatever the instance embeds with).
from django.urls import get_resolver  # noqa: E402

from memoryhub.engine.embeddings.factory import local_embedder_load_before_fork  # noqa: E402

get_resolver().url_patterns  # noqa: B018
local_embedder_load_before_fork()
