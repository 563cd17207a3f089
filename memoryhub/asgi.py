"""ASGI entry points: ``application``, the whole site, and ``chat``, the
OpenAI-compatible endpoint that ``manage.py runall`` serves on its own port."""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryhub.settings")
application = get_asgi_application()

from memoryhub.surface.chat_server import chat_application  # noqa: E402  (needs Django set up)

chat = chat_application()
