"""Django's WSGI application behind a2wsgi's WSGIMiddleware, for an ASGI server: one of the
serving stacks the benchmark sets side by side (on /healthz, a plain view)."""

import os

from a2wsgi import WSGIMiddleware
from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")

application = WSGIMiddleware(get_wsgi_application())
