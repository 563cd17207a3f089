"""MemoryHub settings: one file, configured by environment variables with safe defaults.

Every variable read here is listed in README.md.
"""

import functools
import os
import secrets
import time
import zoneinfo
from datetime import timedelta
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured
from django.utils.csp import CSP
from django.utils.functional import lazy

from memoryhub.engine.cache import cache_settings
from memoryhub.engine.queue import (
    CONNECT_TIMEOUT_SECONDS,
    PUBLISH_RETRY_POLICY,
    celery_queue_settings,
)

BASE_DIR = Path(__file__).resolve().parent.parent


# A value that cannot be read stops start-up with the variable's name: read quietly as
# the default, "treu" would switch something off that its author meant to switch on.


def env_str(name: str, default: str = "") -> str:
    return os.environ.get(name, default)


def _unreadable(name: str, what: str) -> ImproperlyConfigured:
    return ImproperlyConfigured(f"Unexpected value {name}={os.environ[name]!r}: {what}.")


def env_bool(name: str, default: bool = False) -> bool:
    value = os.environ.get(name, "").strip().lower()
    if not value:
        return default
    if value in {"1", "true", "yes", "on"}:
        return True
    if value in {"0", "false", "no", "off"}:
        return False
    raise _unreadable(name, "use true or false")


def env_int(name: str, default: int, *, minimum: int | None = None) -> int:
    value = os.environ.get(name, "").strip()
    if not value:
        return default
    try:
        number = int(value)
    except ValueError:
        raise _unreadable(name, "use a whole number") from None
    if minimum is not None and number < minimum:
        raise _unreadable(name, f"use a whole number of at least {minimum}")
    return number


def env_float(name: str, default: float, *, minimum: float | None = None) -> float:
    value = os.environ.get(name, "").strip()
    if not value:
        return default
    try:
        number = float(value)
    except ValueError:
        raise _unreadable(name, "use a number") from None
    if number != number or (minimum is not None and number < minimum):  # NaN, or too low
        raise _unreadable(name, f"use a number of at least {minimum}")
    return number


def env_choice(name: str, default: str, choices: tuple[str, ...]) -> str:
    value = os.environ.get(name, "").strip()
    if not value:
        return default
    if value.lower() not in choices:
        raise _unreadable(name, f"use one of {', '.join(choices)}")
    return value.lower()


def env_list(name: str, default: list[str]) -> list[str]:
    value = os.environ.get(name)
    if value is None:
        return default
    return [item.strip() for item in value.split(",") if item.strip()]


# The data directory holds the SQLite database, the file queue, task results and the
# generated secret key, so one folder is the whole state of a default install. Its
# folders are made at start-up (``memoryhub.engine.apps``), not when settings are read.
DATA_DIR = Path(env_str("MEMORYHUB_DATA_DIR", str(BASE_DIR / "var"))).resolve()


@functools.cache
def _persistent_secret_key() -> str:
    """Generate the key on first use and keep it, so sessions survive restarts. The
    first process to create the file wins; every other one reads what it wrote."""
    path = DATA_DIR / "secret_key"
    DATA_DIR.mkdir(parents=True, exist_ok=True)
    try:
        handle = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        for _ in range(50):  # written by a process starting beside this one
            key = path.read_text().strip()
            if key:
                return key
            time.sleep(0.02)
        raise ImproperlyConfigured(f"{path} is empty: remove it to have a new key made.") from None
    with os.fdopen(handle, "w") as out:
        out.write(secrets.token_urlsafe(50))
    return path.read_text().strip()


# Read when first needed (signing a cookie, a reset link), so that reading the settings
# alone writes nothing.
SECRET_KEY = env_str("SECRET_KEY") or lazy(_persistent_secret_key, str)()
DEBUG = env_bool("DEBUG", False)
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost", "[::1]"])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

# --- HTTPS and browser security -----------------------------------------------------------

# Served behind a proxy that terminates TLS, sets X-Forwarded-Proto and appends the client
# to X-Forwarded-For: turns on the safe group below (each one can still be set alone).
MEMORYHUB_BEHIND_TLS_PROXY = env_bool("MEMORYHUB_BEHIND_TLS_PROXY", False)
_tls = MEMORYHUB_BEHIND_TLS_PROXY
_proxy_ssl_header = env_list(
    "SECURE_PROXY_SSL_HEADER", ["HTTP_X_FORWARDED_PROTO", "https"] if _tls else []
)
SECURE_PROXY_SSL_HEADER = tuple(_proxy_ssl_header) if _proxy_ssl_header else None
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", _tls)
# A health probe may come straight to the server, without the proxy's header.
SECURE_REDIRECT_EXEMPT = [r"^api/health$"]
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 31_536_000 if _tls else 0, minimum=0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", _tls)
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", False)
SESSION_COOKIE_SECURE = env_bool("SESSION_COOKIE_SECURE", _tls)
CSRF_COOKIE_SECURE = env_bool("CSRF_COOKIE_SECURE", _tls)
# Asking browsers to preload HSTS is a decision for the owner of the whole domain
# (SECURE_HSTS_PRELOAD=true), not a default, so the deploy check does not ask for it.
SILENCED_SYSTEM_CHECKS = [] if SECURE_HSTS_PRELOAD else ["security.W021"]

# The dashboard runs no inline script or style: everything comes from static files here.
# Wiki pages may show images from other HTTPS sites.
SECURE_CSP = {
    "default-src": [CSP.SELF],
    "script-src": [CSP.SELF],
    "style-src": [CSP.SELF],
    "img-src": [CSP.SELF, "https:", "data:"],
    "connect-src": [CSP.SELF],
    "font-src": [CSP.SELF],
    "object-src": [CSP.NONE],
    "base-uri": [CSP.SELF],
    "form-action": [CSP.SELF],
    "frame-ancestors": [CSP.NONE],
}

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django_htmx",
    "axes",
    "ninja",
    # Dependencies run one way: the project -> the surface -> the apps -> the engine ->
    # teams. Agents see the tools in this order (recall, the other tools that span apps,
    # then each app's).
    "memoryhub",
    "teams",
    "memoryhub.engine",
    "memoryhub.surface",
    "facts",
    "codegraph",
    "wiki",
    "concepts",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "memoryhub.middleware.UnstorableTextMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django.middleware.csp.ContentSecurityPolicyMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    # Last, so it turns a lock-out flagged anywhere below into the lock-out answer.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "memoryhub.urls"
WSGI_APPLICATION = "memoryhub.wsgi.application"

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
                "memoryhub.context_processors.nav",
            ],
        },
    },
]

# --- Database -------------------------------------------------------------------------

SQLITE_ENGINE = "memoryhub.engine.db.sqlite3"
POSTGRES_ENGINE = "django.db.backends.postgresql"
DATABASE_URL = env_str("DATABASE_URL")
if DATABASE_URL:
    try:
        _db = dj_database_url.parse(DATABASE_URL)
    except ValueError as exc:
        raise ImproperlyConfigured(f"DATABASE_URL cannot be read: {exc}") from None
    if _db["ENGINE"] == "django.db.backends.sqlite3":
        _db["ENGINE"] = SQLITE_ENGINE
    elif _db["ENGINE"] != POSTGRES_ENGINE:
        # The search core (full-text, vectors, near-duplicate keys) is built for these
        # two: stop here rather than at the first write.
        raise ImproperlyConfigured(
            f"DATABASE_URL names a {_db['ENGINE'].rsplit('.', 1)[-1]} database, but "
            "MemoryHub runs on SQLite or PostgreSQL (with pgvector). Point it at a file "
            "(sqlite:////path/db.sqlite3) or a server (postgres://user@host:5432/name)."
        )
else:
    _db = {"ENGINE": SQLITE_ENGINE, "NAME": DATA_DIR / "memoryhub.sqlite3"}
# How long a thread keeps its database connection. A SQLite connection is a file handle
# with its own page cache: reopening it per request starts every request cold, so it is
# kept (None). On PostgreSQL each process keeps a pool of connections shared by its
# threads (DB_POOL_MAX_SIZE at most; DB_POOL=false for one connection per thread, as
# behind PgBouncer), and a pooled connection goes back to the pool after each request.
_pooled = _db["ENGINE"] == POSTGRES_ENGINE and env_bool("DB_POOL", True)
if _pooled:
    _db.setdefault("OPTIONS", {})["pool"] = {
        "min_size": env_int("DB_POOL_MIN_SIZE", 1, minimum=0),
        "max_size": env_int("DB_POOL_MAX_SIZE", 10, minimum=1),
        "timeout": env_int("DB_POOL_TIMEOUT", 30, minimum=1),
    }
    _db["CONN_MAX_AGE"] = 0
elif env_str("DB_CONN_MAX_AGE").strip():
    _db["CONN_MAX_AGE"] = env_int("DB_CONN_MAX_AGE", 0, minimum=0)
else:
    _db["CONN_MAX_AGE"] = None if _db["ENGINE"] == SQLITE_ENGINE else 60
_db["CONN_HEALTH_CHECKS"] = not _pooled
if _db["ENGINE"] == SQLITE_ENGINE:
    # A file (not shared memory) so that worker processes and the live test server
    # see the same test database; one per test run, so concurrent runs don't collide.
    _db.setdefault("TEST", {})["NAME"] = DATA_DIR / f"test-{os.getpid()}.sqlite3"
DATABASES = {"default": _db}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]

CSRF_FAILURE_VIEW = "memoryhub.views.csrf_failure"

AUTHENTICATION_BACKENDS = [
    # Refuses a locked-out account or address before the password is even checked.
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = env_str("TIME_ZONE", "UTC")
if TIME_ZONE not in zoneinfo.available_timezones() | {"UTC"}:
    raise ImproperlyConfigured(f"Unexpected value TIME_ZONE={TIME_ZONE!r}: use a zone such as UTC.")
USE_I18N = False
USE_TZ = True

# --- Static files (served by the app itself through WhiteNoise) -----------------------

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = DATA_DIR / "static"
WHITENOISE_USE_FINDERS = True
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}

# --- Celery -----------------------------------------------------------------------------

REDIS_URL = env_str("REDIS_URL")
# Redis when REDIS_URL is set; otherwise Celery's filesystem transport under the data
# directory, so a real worker runs with nothing else installed.
# On Redis, a task taken by a worker that died without finishing it is handed out again
# after this long (a worker that stays up hands its unfinished tasks back at once).
MEMORYHUB_QUEUE_VISIBILITY_TIMEOUT = env_int("MEMORYHUB_QUEUE_VISIBILITY_TIMEOUT", 3600, minimum=0)
_queue = celery_queue_settings(
    redis_url=REDIS_URL, data_dir=DATA_DIR, visibility_timeout=MEMORYHUB_QUEUE_VISIBILITY_TIMEOUT
)
CELERY_BROKER_URL = _queue["broker_url"]
CELERY_BROKER_TRANSPORT_OPTIONS = _queue["broker_transport_options"]
CELERY_RESULT_BACKEND = _queue["result_backend"]
CELERY_REDIS_SOCKET_CONNECT_TIMEOUT = _queue.get("redis_socket_connect_timeout")
CELERY_REDIS_SOCKET_TIMEOUT = _queue.get("redis_socket_timeout", 120.0)
CELERY_BROKER_CONNECTION_TIMEOUT = CONNECT_TIMEOUT_SECONDS
CELERY_TASK_PUBLISH_RETRY_POLICY = PUBLISH_RETRY_POLICY
# After the broker failed to take a task, queueing is skipped for this long (the work
# is left to the periodic catch-up), so writes never wait on a broker that is down.
MEMORYHUB_QUEUE_RETRY_SECONDS = env_float("MEMORYHUB_QUEUE_RETRY_SECONDS", 30.0, minimum=1.0)
# JSON only: a message can carry data, never code to run.
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# Celery's prefork pool, except that on the filesystem queue a pool process killed while
# it waits for a job (the OOM killer) no longer leaves the others unable to take one.
CELERY_WORKER_POOL = "memoryhub.engine.pool:TaskPool"
CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER", False)
CELERY_RESULT_EXPIRES = 3600
CELERY_BEAT_SCHEDULE_FILENAME = str(DATA_DIR / "celerybeat-schedule")
# Any number of beats may run (one per machine, say); one holds a lease in Redis and
# schedules, the others take over within this many seconds of its end.
CELERY_BEAT_SCHEDULER = "memoryhub.beat:SingleBeatScheduler"
MEMORYHUB_BEAT_LEASE_SECONDS = env_float("MEMORYHUB_BEAT_LEASE_SECONDS", 30.0, minimum=1.0)
CELERY_BEAT_SCHEDULE: dict[str, dict] = {
    # Catch up on anything the embedder missed (it was down, the model changed...).
    "facts-backfill-embeddings": {
        "task": "facts.backfill_embeddings",
        "schedule": env_float("MEMORYHUB_BACKFILL_EVERY_SECONDS", 600.0, minimum=1.0),
    },
    "wiki-embed-waiting": {
        "task": "wiki.embed_waiting",
        "schedule": env_float("MEMORYHUB_BACKFILL_EVERY_SECONDS", 600.0, minimum=1.0),
    },
    # Pages scanned by an older scanner get the current one's verdict.
    "wiki-rescan": {
        "task": "wiki.rescan",
        "schedule": env_float("MEMORYHUB_WIKI_RESCAN_EVERY_SECONDS", 600.0, minimum=1.0),
    },
}
CELERY_BEAT_SCHEDULE["facts-undo-purge"] = {
    # A delete of many facts can be undone for a few seconds; then its copy goes.
    "task": "facts.undo_purge",
    "schedule": 10.0,
}
CELERY_BEAT_SCHEDULE["facts-distill-due"] = {
    # Distils every scope when Settings -> Memory has it on and its interval has passed.
    "task": "facts.distill_due",
    "schedule": 600.0,
}
CELERY_BEAT_SCHEDULE["codegraph-scans-catch-up"] = {
    # Scans whose task was lost while the broker was down, or whose worker died.
    "task": "codegraph.scans_catch_up",
    "schedule": 60.0,
}
CELERY_BEAT_SCHEDULE["concepts-catch-up"] = {
    # Facts whose extraction task was lost, or that a failing chat model left behind.
    "task": "concepts.catch_up",
    "schedule": env_float("MEMORYHUB_CONCEPTS_CATCH_UP_EVERY_SECONDS", 600.0, minimum=1.0),
}
CELERY_BEAT_SCHEDULE["jobs-sweep"] = {
    # Jobs whose worker died running them, or whose task was lost: sent again or failed.
    "task": "memoryhub.jobs_sweep",
    "schedule": env_float("MEMORYHUB_JOB_SWEEP_EVERY_SECONDS", 30.0, minimum=1.0),
}
# A running job shows a sign of life this often; one that shows none for the stale time
# (its worker was killed) is started again, up to the attempts, then failed with why.
MEMORYHUB_JOB_HEARTBEAT_SECONDS = env_float("MEMORYHUB_JOB_HEARTBEAT_SECONDS", 10.0, minimum=0.1)
MEMORYHUB_JOB_STALE_SECONDS = env_float("MEMORYHUB_JOB_STALE_SECONDS", 120.0, minimum=0.5)
MEMORYHUB_JOB_ATTEMPTS = env_int("MEMORYHUB_JOB_ATTEMPTS", 2, minimum=1)
CELERY_WORKER_HIJACK_ROOT_LOGGER = False

# --- Cache: shared by every web process --------------------------------------------------

# Redis when REDIS_URL is set (see memoryhub/engine/cache.py: bounded waits, and after a
# failure Redis is left alone for this long), otherwise files under the data directory.
MEMORYHUB_CACHE_RETRY_SECONDS = env_float("MEMORYHUB_CACHE_RETRY_SECONDS", 30.0, minimum=1.0)
CACHES = cache_settings(
    redis_url=REDIS_URL, data_dir=DATA_DIR, retry_seconds=MEMORYHUB_CACHE_RETRY_SECONDS
)

# --- Login throttling (django-axes) ------------------------------------------------------

# Failed passwords count against the account and against the address, failed agent
# tokens against the address. An account whose count reaches the limit is refused, right
# password or wrong, until the cool-off has passed since the failure that reached it; an
# address whose count reaches it has its failures refused, while right passwords (of
# accounts that are not locked out) and valid tokens still get in (see teams/auth.py).
# The counts are shared by every web process and incremented atomically: in Redis when
# there is one, otherwise (and while Redis is down) in the database (Django's file and
# database caches increment by read-then-write, which loses concurrent counts).
AXES_HANDLER = "teams.auth.FailedLogins"
AXES_FAILURE_LIMIT = env_int("MEMORYHUB_LOGIN_FAILURE_LIMIT", 10, minimum=1)
AXES_COOLOFF_TIME = timedelta(minutes=env_int("MEMORYHUB_LOGIN_COOLOFF_MINUTES", 15, minimum=1))
# Attempts on a locked-out account, and failed tokens from a locked-out address, are
# refused without being recorded, so a flood of them writes nothing and cannot stretch
# the lock-out.
AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT = False
AXES_LOCKOUT_PARAMETERS = "teams.auth.lockout_parameters"
AXES_CLIENT_IP_CALLABLE = "teams.auth.client_address"
AXES_LOCKOUT_CALLABLE = "teams.auth.locked_out_response"
AXES_DISABLE_ACCESS_LOG = True  # logins are not kept, only failed attempts
AXES_VERBOSE = False

# --- Logging: everything to stdout ------------------------------------------------------

LOG_LEVEL = env_choice(
    "LOG_LEVEL", "info", ("debug", "info", "warning", "error", "critical")
).upper()
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"},
    },
    "filters": {
        "client_errors_on_one_line": {"()": "memoryhub.log.ClientErrorsOnOneLine"},
    },
    "handlers": {
        "stdout": {
            "class": "logging.StreamHandler",
            "stream": "ext://sys.stdout",
            "formatter": "plain",
            "filters": ["client_errors_on_one_line"],
        },
    },
    "root": {"handlers": ["stdout"], "level": LOG_LEVEL},
    "loggers": {
        "django.db.backends": {"level": "INFO"},
        # Failed and locked-out logins are warnings; axes' bookkeeping is not news.
        "axes": {"level": "WARNING"},
        # The MCP SDK logs each stateless exchange starting and ending.
        "mcp": {"level": "WARNING"},
    },
}

# --- MemoryHub --------------------------------------------------------------------------

MEMORYHUB_ADMIN_USERNAME = env_str("MEMORYHUB_ADMIN_USERNAME", "admin")
MEMORYHUB_ADMIN_PASSWORD = env_str("MEMORYHUB_ADMIN_PASSWORD")
MEMORYHUB_HOST = env_str("MEMORYHUB_HOST", "127.0.0.1")
MEMORYHUB_PORT = env_int("MEMORYHUB_PORT", 8000, minimum=1)
MEMORYHUB_WEB_WORKERS = env_int("MEMORYHUB_WEB_WORKERS", 2, minimum=1)
# Threads of each web process (with the search threads, within DB_POOL_MAX_SIZE).
MEMORYHUB_WEB_THREADS = env_int("MEMORYHUB_WEB_THREADS", 4, minimum=1)
# The OpenAI-compatible endpoint (/v1/chat/completions) on its own port, where a long
# answer holds no web thread: at most this many calls of one token at once, waiting at
# most CONNECT seconds to reach the chat model and READ seconds for each of its words.
MEMORYHUB_CHAT_PORT = env_int("MEMORYHUB_CHAT_PORT", MEMORYHUB_PORT + 1, minimum=1)
MEMORYHUB_CHAT_CALLS_PER_TOKEN = env_int("MEMORYHUB_CHAT_CALLS_PER_TOKEN", 8, minimum=1)
MEMORYHUB_CHAT_CONNECT_TIMEOUT_SECONDS = env_float(
    "MEMORYHUB_CHAT_CONNECT_TIMEOUT_SECONDS", 10.0, minimum=0.1
)
MEMORYHUB_CHAT_READ_TIMEOUT_SECONDS = env_float(
    "MEMORYHUB_CHAT_READ_TIMEOUT_SECONDS", 300.0, minimum=0.1
)
MEMORYHUB_CHAT_MAX_BODY_BYTES = env_int("MEMORYHUB_CHAT_MAX_BODY_BYTES", 20_000_000, minimum=1)
MEMORYHUB_WORKER_CONCURRENCY = env_int("MEMORYHUB_WORKER_CONCURRENCY", 2, minimum=1)
# A worker that takes no task for this long while tasks wait in its queue is stuck: runall
# restarts it, and /api/health says so.
MEMORYHUB_WORKER_STALL_SECONDS = env_float("MEMORYHUB_WORKER_STALL_SECONDS", 60.0, minimum=1.0)
AUDIT_PAGE_SIZE = 50
# The largest document POST /api/memories/import and manage.py import_memories read,
# and the number of facts from which the API runs an import as a job.
MEMORYHUB_IMPORT_MAX_BYTES = env_int("MEMORYHUB_IMPORT_MAX_BYTES", 50_000_000, minimum=1)
MEMORYHUB_IMPORT_INLINE_FACTS = env_int("MEMORYHUB_IMPORT_INLINE_FACTS", 1000, minimum=0)

# Defaults of the instance's memory settings (editable later under Settings -> Memory).
MEMORY_DEFAULTS = {
    "memory_enabled": env_bool("MEMORYHUB_MEMORY_ENABLED", True),
    "codegraph_enabled": env_bool("MEMORYHUB_CODEGRAPH_ENABLED", True),
    "wiki_enabled": env_bool("MEMORYHUB_WIKI_ENABLED", True),
    "embeddings_enabled": env_bool("MEMORYHUB_EMBEDDINGS_ENABLED", True),
    "embeddings_provider": env_choice(
        "MEMORYHUB_EMBEDDINGS_PROVIDER", "local", ("local", "openai", "legacy")
    ),
    "embeddings_url": env_str("MEMORYHUB_EMBEDDINGS_URL"),
    "embeddings_model": env_str("MEMORYHUB_EMBEDDINGS_MODEL"),
    "embeddings_api_key": env_str("MEMORYHUB_EMBEDDINGS_API_KEY"),
    "recall_max_items": env_int("MEMORYHUB_RECALL_MAX_ITEMS", 8, minimum=1),
    "recall_char_budget": env_int("MEMORYHUB_RECALL_CHAR_BUDGET", 2000, minimum=1),
    "max_content_length": env_int("MEMORYHUB_MAX_CONTENT_LENGTH", 2000, minimum=1),
    "max_active_facts": env_int("MEMORYHUB_MAX_ACTIVE_FACTS", 1000, minimum=0),
    "extraction_review_required": env_bool("MEMORYHUB_EXTRACTION_REVIEW", False),
    "distillation_enabled": env_bool("MEMORYHUB_DISTILL_ENABLED", False),
    "distillation_every_hours": env_int("MEMORYHUB_DISTILL_EVERY_HOURS", 12, minimum=1),
    "distillation_min_facts": env_int("MEMORYHUB_DISTILL_MIN_FACTS", 12, minimum=2),
    "llm_url": env_str("MEMORYHUB_LLM_URL"),
    "llm_model": env_str("MEMORYHUB_LLM_MODEL"),
    "llm_api_key": env_str("MEMORYHUB_LLM_API_KEY"),
}
# The chat model client: seconds per attempt (the whole answer, however slowly it comes),
# attempts after the first (for 429, 5xx, lost connections and timeouts), and calls in
# flight at once from one process (others wait their turn).
LLM_TIMEOUT_SECONDS = env_float("MEMORYHUB_LLM_TIMEOUT_SECONDS", 60.0, minimum=0.1)
LLM_RETRIES = env_int("MEMORYHUB_LLM_RETRIES", 2, minimum=0)
LLM_CONCURRENCY = env_int("MEMORYHUB_LLM_CONCURRENCY", 2, minimum=1)
# A request (an inline extraction) waits on the chat model this long at most, every attempt
# and every wait between them together; only LLM_CONCURRENCY requests of a process wait on
# it at once (another's extraction becomes a job). Jobs keep the timeout and retries above.
LLM_REQUEST_DEADLINE_SECONDS = env_float(
    "MEMORYHUB_LLM_REQUEST_DEADLINE_SECONDS", 12.0, minimum=0.1
)
# The local embedding model's weights, folded to float32 once and memory-mapped by every
# process of the server instead of copied into each.
EMBEDDINGS_WEIGHTS_DIR = DATA_DIR / "models"
# A request waits on a remote embedder for its query's vector this long at most; then it
# searches by words alone, and says so. The local model is not waited on this way.
EMBEDDINGS_QUERY_DEADLINE_SECONDS = env_float(
    "MEMORYHUB_EMBEDDINGS_QUERY_DEADLINE_SECONDS", 3.0, minimum=0.1
)
# After this many calls in a row from a process's requests got no answer, that process
# leaves the chat model (or the remote embedder) alone: requests fail at once (extraction
# 503, searches by words alone) for EDGE_CIRCUIT_RETRY_SECONDS, then one request tries it
# again, and an answer closes the circuit.
EDGE_CIRCUIT_FAILURES = env_int("MEMORYHUB_EDGE_CIRCUIT_FAILURES", 3, minimum=1)
EDGE_CIRCUIT_RETRY_SECONDS = env_float("MEMORYHUB_EDGE_CIRCUIT_RETRY_SECONDS", 30.0, minimum=0.1)

# --- CodeGraph --------------------------------------------------------------------------

# Files larger than this are recorded as skipped, not parsed.
CODEGRAPH_MAX_FILE_BYTES = env_int("CODEGRAPH_MAX_FILE_BYTES", 1_000_000, minimum=0)
# A scan stops adding files beyond this many (and says so on the project).
CODEGRAPH_MAX_FILES = env_int("CODEGRAPH_MAX_FILES", 20_000, minimum=1)
# From this many files to parse on, a scan parses in worker processes (one per core):
# below it, starting them costs more than it saves.
CODEGRAPH_PARALLEL_MIN_FILES = env_int("CODEGRAPH_PARALLEL_MIN_FILES", 300, minimum=1)
# A queued or running scan with no sign of life for this long is queued again by the
# catch-up (its task was lost, or its worker died); a running scan shows one per batch.
CODEGRAPH_SCAN_STALE_SECONDS = env_float("CODEGRAPH_SCAN_STALE_SECONDS", 120.0, minimum=1.0)
# Folders a scan may read, comma-separated. The server reads whatever path a user
# names, so by default only the home directory of the account the server runs as is
# allowed (never "/", /etc or other users' homes); add source checkouts explicitly.
CODEGRAPH_ALLOWED_ROOTS = env_list("CODEGRAPH_ALLOWED_ROOTS", [str(Path.home())])
