"""Settings shared by every environment; everything that differs comes from the environment."""

import socket
from datetime import timedelta
from ipaddress import ip_network
from pathlib import Path

import environ
from csp.constants import NONE, SELF

BASE_DIR = Path(__file__).resolve().parent.parent.parent

env = environ.Env()

SECRET_KEY = env("SECRET_KEY", default="local-development-only-secret-key-not-for-production")
DEBUG = env.bool("DEBUG", default=False)
ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["127.0.0.1", "localhost", "[::1]", "testserver"])
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])

HOST = env("HOST", default="127.0.0.1")
PORT = env.int("PORT", default=8000)

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.postgres",
    "rest_framework",
    "rest_framework_api_key",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_celery_beat",
    "django_prometheus",
    "axes",
    "csp",
    "audit",
    "seasons",
    "webhooks",
    "matches",
    "leaderboards",
    "pages",
]

MIDDLEWARE = [
    "django_prometheus.middleware.PrometheusBeforeMiddleware",
    # 4xx and 5xx per minute for the dashboard's charts; outermost, to see every answer.
    "config.building_blocks.minute_counts.ResponseCountsMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "config.building_blocks.content_security.PagesContentSecurityPolicyMiddleware",
    # Static files (admin, API docs, player pages) are served by the app itself, no CDN.
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # Turns a login that django-axes refused (too many failures) into its lockout page.
    "axes.middleware.AxesMiddleware",
    "django_prometheus.middleware.PrometheusAfterMiddleware",
]

ROOT_URLCONF = "config.urls"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

WSGI_APPLICATION = "config.wsgi.application"
ASGI_APPLICATION = "server.asgi.application"

DATABASES = {
    "default": env.db("DATABASE_URL", default="postgres://postgres@127.0.0.1:5432/leaderboard"),
}
# Each thread that serves requests keeps its connection, checked before every request, so a
# restarted PostgreSQL is picked up at once without restarting the process. HTTP runs on a fixed
# pool of threads (server/asgi.py), so connections are bounded by it. (A psycopg pool was tried:
# after a database restart it reconnects with exponential backoff and kept refusing requests for
# seconds after PostgreSQL was back.)
#
# By default a connection lives as long as its thread. With a limit (the old default was 60 s)
# the connections a load opened together expire together: a backend that has touched gigabytes
# of shared buffers costs the kernel its page tables when it exits, and its successor rebuilds
# them and its catalog caches, so at 8,000 results a second every write stalled for about a
# second each minute (the benchmark's POST latency by second). DB_CONN_MAX_AGE=<seconds> sets a
# limit again.
_conn_max_age = env("DB_CONN_MAX_AGE", default="")
DATABASES["default"]["CONN_MAX_AGE"] = int(_conn_max_age) if _conn_max_age else None
# Threads per web process that run Django's views (and hold a database connection each).
WEB_THREADS = env.int("WEB_THREADS", default=8)
DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
DATABASES["default"].setdefault("OPTIONS", {})
DATABASES["default"]["OPTIONS"].setdefault("connect_timeout", 5)
# The write path's statements are prepared once per connection (matches/services/statements.py):
# replanned on every request they cost PostgreSQL a sixth more. Everything else Django binds on
# the client and never prepares, so the threshold only has to be a number (None turns preparing
# off). Behind a pooler in transaction mode that does not track prepared statements (PgBouncer
# before 1.21, or without max_prepared_statements), set DB_PREPARED_STATEMENTS=0.
DATABASES["default"]["OPTIONS"]["prepare_threshold"] = (
    1_000_000 if env.bool("DB_PREPARED_STATEMENTS", default=True) else None
)

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# The one Redis every role below uses unless given its own (config/building_blocks/redis.py;
# docs/scaling.md says which role can go where).
REDIS_URL = env("REDIS_URL", default="redis://127.0.0.1:6379/0")
# The leaderboard data: every key of leaderboards/store.py. With LEADERBOARD_REDIS_CLUSTER the URL
# names one seed node of a Redis Cluster, and each season's keys land on the node of its slot.
LEADERBOARD_REDIS_URL = env("LEADERBOARD_REDIS_URL", default=REDIS_URL)
LEADERBOARD_REDIS_CLUSTER = env.bool("LEADERBOARD_REDIS_CLUSTER", default=False)
# Replicas of the leaderboard primary (not of a Cluster) that answer shared reads: top pages,
# around-me, the live ticker. Each process checks them every LEADERBOARD_REPLICA_CHECK_SECONDS and
# reads the primary instead of one that is behind, unlinked or down
# (config/building_blocks/redis.py).
LEADERBOARD_REDIS_REPLICA_URLS = env.list("LEADERBOARD_REDIS_REPLICA_URLS", default=[])
LEADERBOARD_REPLICA_CHECK_SECONDS = env.float("LEADERBOARD_REPLICA_CHECK_SECONDS", default=1.0)
# With replicas, the mirror waits (at most this long) for them to hold its writes before it
# tells the sockets: a ticker that then reads a replica sees the change.
LEADERBOARD_REPLICA_WAIT_MS = env.int("LEADERBOARD_REPLICA_WAIT_MS", default=50)
# A player whose result this process committed reads their own rank (and around-me) from the
# primary for this long (leaderboards/read_your_writes.py).
LEADERBOARD_READ_YOUR_WRITES_SECONDS = env.float(
    "LEADERBOARD_READ_YOUR_WRITES_SECONDS", default=5.0
)
# The profile directory: every player's display name and avatar, kept without expiry for the
# boards' names (leaderboards/store/profiles.py). Its own Redis when given, so the leaderboard
# Redis's memory stays about standings (about 30-40 bytes a player here).
PROFILES_REDIS_URL = env("PROFILES_REDIS_URL", default=LEADERBOARD_REDIS_URL)
PROFILES_REDIS_CLUSTER = env.bool(
    "PROFILES_REDIS_CLUSTER",
    default=LEADERBOARD_REDIS_CLUSTER and PROFILES_REDIS_URL == LEADERBOARD_REDIS_URL,
)
# Django's cache and the rate limits' counters (config/building_blocks/throttles.py).
CACHE_REDIS_URL = env("CACHE_REDIS_URL", default=REDIS_URL)
# The channel layer's Redis (channels-redis speaks to one Redis or Sentinel, not to a Cluster).
CHANNEL_LAYER_REDIS_URL = env("CHANNEL_LAYER_REDIS_URL", default=REDIS_URL)

# Every key this deployment writes to Redis starts with this prefix: the leaderboard data
# (leaderboards/store.py), the rate limits (config/building_blocks/throttles.py), the channel layer,
# Django's
# cache and a Redis broker's queues. Deployments sharing one Redis each need their own, none of
# them the start of another's (docs/configuration.md).
LEADERBOARD_KEY_PREFIX = env("LEADERBOARD_KEY_PREFIX", default="lb:")

CACHES = {
    "default": {
        "BACKEND": "django_redis.cache.RedisCache",
        "LOCATION": CACHE_REDIS_URL,
        "KEY_PREFIX": f"{LEADERBOARD_KEY_PREFIX}cache",
        "OPTIONS": {
            "CLIENT_CLASS": "django_redis.client.DefaultClient",
            "SOCKET_CONNECT_TIMEOUT": 2,
            "SOCKET_TIMEOUT": 2,
            # Django's own cache: the service keeps none of its data here (profiles and shared
            # answers are leaderboard keys, leaderboards/store.py); a Redis outage must not fail
            # a request over it.
            "IGNORE_EXCEPTIONS": True,
        },
    }
}

# How long the top-K answer may be served from the API process's memory.
LEADERBOARD_TOP_CACHE_SECONDS = env.float("LEADERBOARD_TOP_CACHE_SECONDS", default=1.0)
# How many top-K answers (and, apart, around-me answers) a process keeps: a page of 100 is
# about 20-150 kB with names and avatar URLs.
LEADERBOARD_TOP_CACHE_ENTRIES = env.int("LEADERBOARD_TOP_CACHE_ENTRIES", default=256)
# /readyz reports not ready when the oldest unmirrored result is older than this.
READY_MAX_MIRROR_LAG_SECONDS = env.float("READY_MAX_MIRROR_LAG_SECONDS", default=5.0)
# How long a process reuses its /readyz answer and its /metrics page (each queries PostgreSQL and
# the broker), so a storm of probes costs the stores one check per process at most (0: never).
PROBE_CACHE_SECONDS = env.float("PROBE_CACHE_SECONDS", default=1.0)
# How long a request's board and season lookup may be reused by the same process.
LEADERBOARD_SEASON_CACHE_SECONDS = env.float("LEADERBOARD_SEASON_CACHE_SECONDS", default=1.0)
# A web process queues the mirror at most once in this many seconds: committed standings that
# arrive meanwhile wait and go as one task; after a quiet spell the first goes at once (0: one
# task per request, at once). The worker's cost is mostly per task (leaderboards/coalescing.py):
# at 6,000 results a second, 100 ms instead of 50 took a third off the worker's CPU and about a
# tenth off the whole write path's, for about 50 ms more freshness (bench/README.md).
MIRROR_COALESCE_SECONDS = env.float("MIRROR_COALESCE_SECONDS", default=0.1)
# Live pushes a web process spends a second, per season, on what other players' results
# changed (a new top, a player passed), a second's worth at most at once; a player's own new
# score never waits for it. Past it, the sockets that waited longest go first
# (leaderboards/live.py).
LIVE_FANOUT_PER_SECOND = env.float("LIVE_FANOUT_PER_SECOND", default=500.0)
# Live sockets one client address may hold open in one web process (0: no limit); the rest are
# closed with 4429 (leaderboards/live/addresses.py). Each socket costs its process about 73 KiB.
LIVE_SOCKETS_PER_ADDRESS = env.int("LIVE_SOCKETS_PER_ADDRESS", default=50)
# How long a web process reuses a verified game-server key and its boards (a revoked key stops
# working within this time).
GAME_SERVER_KEY_CACHE_SECONDS = env.float("GAME_SERVER_KEY_CACHE_SECONDS", default=5.0)
# A result's ended_at may lie this many seconds in the future (game-server clock skew).
RESULT_CLOCK_SKEW_SECONDS = env.int("RESULT_CLOCK_SKEW_SECONDS", default=5)
# Default grace period for late results when a season is created without one.
DEFAULT_SEASON_GRACE_SECONDS = env.int("DEFAULT_SEASON_GRACE_SECONDS", default=3600)

# Redis (redis://, not a Cluster) or RabbitMQ (amqp://).
CELERY_BROKER_URL = env("CELERY_BROKER_URL", default=REDIS_URL)
# Three queues, each served by its own worker (the Procfile's). The default one carries the
# mirror and the short periodic tasks. The periodic long jobs (closing the seasons that are due,
# reconciliation) have `jobs`, one at a time, so an hour-long close never holds up the mirror.
# The jobs asked for on demand have `rebuilds`: the heal of a season Redis lost (one per lost
# season, each a rebuild of seconds to minutes, which on the mirror's queue would take every
# mirror process when a Redis comes back empty) and an operator's rebuild or close now (which
# must not wait behind the periodic ones). Its worker runs CELERY_REBUILDS_CONCURRENCY at a time.
# The close tasks' names up to 0.1.0 (seasons.tasks.*, still accepted: leaderboards/tasks.py)
# keep their queues, so a periodic task stored under one never runs a close on the mirror's
# queue; remove them in 0.3.0.
CELERY_LONG_JOBS_QUEUE = env("CELERY_LONG_JOBS_QUEUE", default="jobs")
CELERY_REBUILDS_QUEUE = env("CELERY_REBUILDS_QUEUE", default="rebuilds")
# The webhooks' deliveries have `webhooks`, served by a worker of their own: a POST waits on
# someone else's server for up to its endpoint's timeout, which must never hold up the mirror.
CELERY_WEBHOOKS_QUEUE = env("CELERY_WEBHOOKS_QUEUE", default="webhooks")
CELERY_TASK_ROUTES = {
    "webhooks.tasks.deliver_webhooks": {"queue": CELERY_WEBHOOKS_QUEUE},
    **{
        task: {"queue": CELERY_LONG_JOBS_QUEUE}
        for task in (
            "leaderboards.tasks.close_due_seasons",
            "leaderboards.tasks.reconcile",
            "seasons.tasks.close_due_seasons",
        )
    },
    **{
        task: {"queue": CELERY_REBUILDS_QUEUE}
        for task in (
            "leaderboards.tasks.heal_season",
            "leaderboards.tasks.rebuild_season",
            "leaderboards.tasks.close_season",
            "leaderboards.tasks.correct_archives_after_ban",
            "seasons.tasks.close_season",
        )
    },
}
CELERY_RESULT_BACKEND = None
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TIMEZONE = "UTC"
CELERY_BEAT_SCHEDULER = "django_celery_beat.schedulers:DatabaseScheduler"
CELERY_WORKER_PREFETCH_MULTIPLIER = 4
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# Publishing gives up at once when the broker is down (max_retries 0): the result is already
# committed and the sweep mirrors it, so a request must not wait on broker reconnects.
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": 300,
    "max_retries": 0,
    "socket_connect_timeout": 2,
    "socket_timeout": 5,
}
if CELERY_BROKER_URL.startswith(("redis://", "rediss://")):
    # A Redis broker's queues, bindings and broadcasts under the deployment's prefix too, so
    # deployments sharing one Redis never take each other's tasks.
    CELERY_BROKER_TRANSPORT_OPTIONS["global_keyprefix"] = f"{LEADERBOARD_KEY_PREFIX}celery:"
# Mirror tasks are idempotent, so they acknowledge only after they ran: a worker killed
# in the middle leaves the message to be delivered again.
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
# Celery's Django fixup would otherwise close the database connections (with a pool under the
# prefork pool, the whole pool) around every task: two new PostgreSQL sessions per mirror task.
CELERY_DB_REUSE_MAX = env.int("CELERY_DB_REUSE_MAX", default=1000)

# Webhooks (docs/webhooks.md). Their URLs may resolve only to public addresses unless this is
# on (local development and the tests post to 127.0.0.1): never in production, where it would
# let an endpoint reach PostgreSQL, Redis or a cloud's metadata service.
WEBHOOK_ALLOW_PRIVATE_URLS = env.bool("WEBHOOK_ALLOW_PRIVATE_URLS", default=False)
# A delivery that has not been answered with a 2xx this long after it was made is given up.
WEBHOOK_GIVE_UP_SECONDS = env.int("WEBHOOK_GIVE_UP_SECONDS", default=24 * 3600)
# Retries wait a random time up to BASE x 2^(attempts - 1) seconds, at most MAX.
WEBHOOK_RETRY_BASE_SECONDS = env.float("WEBHOOK_RETRY_BASE_SECONDS", default=10.0)
WEBHOOK_RETRY_MAX_SECONDS = env.float("WEBHOOK_RETRY_MAX_SECONDS", default=3600.0)
# POSTs one delivery run makes at once, over every endpoint (each within its concurrency).
WEBHOOK_DELIVERY_THREADS = env.int("WEBHOOK_DELIVERY_THREADS", default=16)
# Days a webhook event and its deliveries are kept once none is on its way (the admin's history).
WEBHOOK_KEEP_DAYS = env.int("WEBHOOK_KEEP_DAYS", default=7)
# How long a process takes "does any endpoint want this board's threshold events?" as read
# (the mirror asks on every write): an endpoint added or switched on is heard from within it.
WEBHOOK_WANTED_CACHE_SECONDS = env.float("WEBHOOK_WANTED_CACHE_SECONDS", default=5.0)

# The console's logins (the admin) go through django-axes first, which refuses them while the
# client address is locked out. Game servers authenticate by API key and never reach these
# backends.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
# Failed logins allowed from one client address, whatever usernames they tried, before that
# address is locked out (for every username) for AXES_COOLOFF_MINUTES; lift it sooner with
# `manage.py axes_reset_ip ADDRESS`. Never per username alone: anyone could then keep an
# operator locked out from everywhere during an incident. The (username, address) pair needs
# no rule of its own: axes counts each rule's failures against the one AXES_FAILURE_LIMIT, and
# an address's count is never below any of its pairs'. A success clears the address's failures.
AXES_FAILURE_LIMIT = env.int("AXES_FAILURE_LIMIT", default=5)
AXES_COOLOFF_TIME = timedelta(minutes=env.float("AXES_COOLOFF_MINUTES", default=15))
AXES_LOCKOUT_PARAMETERS = ["ip_address"]
AXES_RESET_ON_SUCCESS = True
# No "AXES: BEGIN version ..." banner on every manage.py call and process start.
AXES_VERBOSE = False
# The client's address by the same rule as the rate limits (TRUSTED_PROXIES).
AXES_CLIENT_IP_CALLABLE = "config.building_blocks.throttles.client_address"

# A strict Content-Security-Policy (django-csp): the pages load their script, style, data and
# live stream from this site only (no inline script or style). Player avatars are the one thing
# from elsewhere: images from CSP_AVATAR_SOURCES. The admin and the API (JSON, and Swagger UI's
# inline bootstrapping) go without it.
CONTENT_SECURITY_POLICY = {
    "EXCLUDE_URL_PREFIXES": ["/admin/", "/api/"],
    "DIRECTIVES": {
        "default-src": [SELF],
        "img-src": [SELF, *env.list("CSP_AVATAR_SOURCES", default=["https:"])],
        "object-src": [NONE],
        "base-uri": [NONE],
        "form-action": [SELF],
        "frame-ancestors": [NONE],
    },
}

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
STATICFILES_DIRS = [BASE_DIR / "static"] if (BASE_DIR / "static").exists() else []
WHITENOISE_USE_FINDERS = True

# Proxies (addresses or CIDR blocks) whose X-Forwarded-For is believed when rate limiting by
# client address (config/building_blocks/throttles.py); with none, the client is the connection's
# address.
TRUSTED_PROXIES = [
    ip_network(proxy, strict=False) for proxy in env.list("TRUSTED_PROXIES", default=[])
]

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.AllowAny"],
    "DEFAULT_RENDERER_CLASSES": ["config.building_blocks.renderers.AnswerRenderer"],
    "DEFAULT_PARSER_CLASSES": ["config.building_blocks.api.LimitedJSONParser"],
    "DEFAULT_THROTTLE_CLASSES": [
        "config.building_blocks.throttles.PublicThrottle",
        "config.building_blocks.throttles.GameServerThrottle",
    ],
    # "N/s", "N/m", "N/h"; an empty value turns a limit off.
    "DEFAULT_THROTTLE_RATES": {
        "public": env("THROTTLE_PUBLIC_RATE", default="100/s") or None,
        # The player pages, per client address (pages/views.py).
        "pages": env("THROTTLE_PAGES_RATE", default="10/s") or None,
        "game_server": env("THROTTLE_GAME_SERVER_RATE", default="2000/s") or None,
    },
    "EXCEPTION_HANDLER": "config.building_blocks.errors.api_exception_handler",
    "DEFAULT_SCHEMA_CLASS": "config.building_blocks.schema.ApiSchema",
    "UNAUTHENTICATED_USER": None,
}

SPECTACULAR_SETTINGS = {
    "TITLE": "Leaderboard API",
    "DESCRIPTION": (
        "Real-time leaderboards: game servers post match results, clients read exact ranks."
    ),
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    # One component per set of choices, wherever it is used (fields and query parameters), so
    # a generated client has one enum class for each. Two fields are called "status": a
    # season's and a posted result's.
    "ENUM_NAME_OVERRIDES": {
        "SeasonStatusEnum": "seasons.choices.SeasonStatus",
        "ResultStatusEnum": ["accepted", "duplicate"],
        "RankStyleEnum": "leaderboards.selectors.RANK_STYLES",
        "ScoreOperatorEnum": "seasons.choices.ScoreOperator",
        "SortOrderEnum": "seasons.choices.SortOrder",
        "ScheduleEnum": "seasons.choices.ScheduleKind",
    },
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "config.building_blocks.schema.named_enum_parameters",
    ],
}

API_KEY_CUSTOM_HEADER = None

# Request bodies larger than this are refused with 413 (a full batch of 1,000 results is ~120 kB).
MAX_REQUEST_BODY_BYTES = env.int("MAX_REQUEST_BODY_BYTES", default=1024 * 1024)
DATA_UPLOAD_MAX_MEMORY_SIZE = MAX_REQUEST_BODY_BYTES

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": env("LOG_LEVEL", default="INFO")},
    "loggers": {"django.db.backends": {"level": "WARNING"}},
}

# The channel layer carries "season changed" notices from mirror workers to every web process's
# live ticker (leaderboards/live/). Over Redis pub/sub: a notice is one PUBLISH, and a ticker
# reads them from its one subscribed connection as they come, with no round trip each. (The
# list-based layer took four round trips a notice; at peak, on a saturated box, a ticker read
# 10-20 a second of the 20-40 sent, and its pushes fell 10 s behind the results.) Its channel
# names start with the leaderboard prefix, so deployments and test runs sharing one Redis never
# hear each other. A notice sent while a ticker is disconnected is lost, which the tickers'
# refresh (every 15 s) makes good.
CHANNEL_LAYERS = {
    "default": {
        "BACKEND": "channels_redis.pubsub.RedisPubSubChannelLayer",
        "CONFIG": {
            "hosts": [
                {
                    "address": CHANNEL_LAYER_REDIS_URL,
                    # No socket timeout, on purpose. With one, redis-py writes every command
                    # through asyncio.wait_for, which on Python 3.11 swallows a cancellation
                    # landing as the write ends (CPython gh-86296): a live ticker's task then
                    # waits on for ever and its web process never stops. The layer's reads end
                    # by themselves (it polls its subscription every 0.1 s). A peer that
                    # vanished without closing is found by TCP instead, within about 25 s: keepalive
                    # probes an idle connection, and TCP_USER_TIMEOUT bounds data left
                    # unacknowledged (otherwise retransmitted for some 15 minutes).
                    "socket_timeout": None,
                    "socket_connect_timeout": 5,
                    "socket_keepalive": True,
                    "socket_keepalive_options": {
                        getattr(socket, option): value
                        for option, value in (
                            ("TCP_KEEPIDLE", 10),
                            ("TCP_KEEPINTVL", 5),
                            ("TCP_KEEPCNT", 3),
                            ("TCP_USER_TIMEOUT", 25_000),
                        )
                        if hasattr(socket, option)
                    },
                }
            ],
            "prefix": f"{LEADERBOARD_KEY_PREFIX}asgi:",
        },
    }
}
