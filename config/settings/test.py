"""Settings for the test suite: the real PostgreSQL and Redis, with keys of this run's own."""

import os
import uuid

from .base import *  # noqa: F403
from .base import CACHES, CELERY_BROKER_TRANSPORT_OPTIONS, CHANNEL_LAYERS, DATABASES, env

# Each test process (and each xdist worker) writes under its own Redis prefix, so runs
# sharing one Redis never see each other's keys.
_RUN = f"{os.environ.get('PYTEST_XDIST_WORKER', 'main')}-{uuid.uuid4().hex[:8]}"
LEADERBOARD_KEY_PREFIX = f"test:{_RUN}:lb:"
CACHES["default"]["KEY_PREFIX"] = f"{LEADERBOARD_KEY_PREFIX}cache"

DATABASES["default"]["TEST"] = {
    "NAME": f"test_leaderboard{env('TEST_DB_SUFFIX', default='')}",
}
DATABASES["default"]["CONN_MAX_AGE"] = 0

CELERY_TASK_ALWAYS_EAGER = True
CELERY_TASK_EAGER_PROPAGATES = True

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
LEADERBOARD_TOP_CACHE_SECONDS = 0.0
LEADERBOARD_SEASON_CACHE_SECONDS = 0.0
GAME_SERVER_KEY_CACHE_SECONDS = 0.0
PROBE_CACHE_SECONDS = 0.0
# Tests run the mirror inside the request's on-commit callbacks; the coalescer has its own test.
MIRROR_COALESCE_SECONDS = 0.0

# The channel layer's keys and a Redis broker's follow this run's prefix too.
CHANNEL_LAYERS["default"]["CONFIG"]["prefix"] = f"{LEADERBOARD_KEY_PREFIX}asgi:"
if "global_keyprefix" in CELERY_BROKER_TRANSPORT_OPTIONS:
    CELERY_BROKER_TRANSPORT_OPTIONS["global_keyprefix"] = f"{LEADERBOARD_KEY_PREFIX}celery:"

# The tests' webhook receivers listen on 127.0.0.1; tests of the guard turn this off.
WEBHOOK_ALLOW_PRIVATE_URLS = True
# An endpoint a test adds is wanted at once.
WEBHOOK_WANTED_CACHE_SECONDS = 0
