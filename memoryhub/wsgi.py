import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryhub.settings")
application = get_wsgi_application()

# Loaded here rather than on the first request, so that when gunicorn loads the
# application before forking its workers (runall: --preload) they share it: the URLconf,
# with every view, API and schema, the local embedding model's query session (which
# the wiki scanner reads with, whatever the instance embeds with), and recall's
# in-memory copies of the fact vectors (each worker keeps its own current from there).
import logging  # noqa: E402

from django.urls import get_resolver  # noqa: E402

from facts.search import fact_search_warm  # noqa: E402
from memoryhub.engine.embeddings.factory import local_embedder_load_before_fork  # noqa: E402

get_resolver().url_patterns  # noqa: B018
local_embedder_load_before_fork()
try:
    fact_search_warm()  # its database connection is closed before any fork
except Exception:  # not migrated yet, say: the first recall builds them
    logging.getLogger(__name__).exception("Could not build recall's in-memory copies")
