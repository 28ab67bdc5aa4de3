"""Django's own ASGI handler over the service's settings, as Django documents it: one of the
serving stacks the benchmark sets side by side (on /healthz, a plain view)."""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")

application = get_asgi_application()
