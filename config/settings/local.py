"""Settings for `make run` on a developer's machine."""

from .base import *  # noqa: F403
from .base import env

# Local receivers (127.0.0.1) may take webhooks on a developer's machine.
WEBHOOK_ALLOW_PRIVATE_URLS = env.bool("WEBHOOK_ALLOW_PRIVATE_URLS", default=True)
