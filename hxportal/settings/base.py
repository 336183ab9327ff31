"""Settings shared by every environment, read from the environment.

``DATABASE_URL`` defaults to a SQLite file and ``CELERY_BROKER_URL`` to kombu's
filesystem transport, so one machine runs web and worker with nothing else
installed; set them to PostgreSQL and Redis for a real deployment.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured
from kombu import Exchange, Queue

from hxportal.settings.env import env_bool, env_int, env_list, env_str

BASE_DIR = Path(__file__).resolve().parent.parent.parent
DATA_DIR = Path(env_str("HX_DATA_DIR", str(BASE_DIR / "data")))

DEBUG = env_bool("DEBUG", False)
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]"])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "rest_framework",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_celery_beat",
    "axes",
    "hxportal",
    "allocation",
    "health",
    "simulation",
    "recommendations",
    "whatif",
    "dashboard",
    "metrics",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # Before any body is read (CSRF reads it in process_view, which runs later), after
    # authentication so that the page it answers for forms knows the user.
    "hxportal.middleware.BodySizeLimitMiddleware",
    "hxportal.middleware.PagesLoginRequiredMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "hxportal.middleware.SecurityHeadersMiddleware",
    # Innermost, so its lockout answer still gets the security headers above.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "hxportal.urls"
WSGI_APPLICATION = "hxportal.wsgi.application"
AUTH_USER_MODEL = "hxportal.User"
# Axes first: it refuses a locked (username, address) pair before any password check.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "dashboard:home"
LOGOUT_REDIRECT_URL = "login"

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
                "hxportal.context_processors.roles",
                "hxportal.context_processors.navigation",
            ],
        },
    },
]


def _database(url: str) -> dict:
    config = dj_database_url.parse(url, conn_max_age=env_int("DB_CONN_MAX_AGE", 60))
    # A persistent connection is checked before reuse, so after a database restart
    # the next request reconnects instead of failing.
    config["CONN_HEALTH_CHECKS"] = True
    if config["ENGINE"] == "django.db.backends.sqlite3":
        # WAL lets the worker write while the web process reads; IMMEDIATE
        # transactions make SQLite take its write lock up front, the closest it
        # has to row locks, so concurrent allocations queue instead of failing.
        config["OPTIONS"] = {
            "timeout": 30,
            "transaction_mode": "IMMEDIATE",
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        }
        config["CONN_MAX_AGE"] = 0
    return config


DEFAULT_DATABASE_URL = f"sqlite:///{DATA_DIR / 'hxportal.sqlite3'}"
DATABASES = {"default": _database(env_str("DATABASE_URL") or DEFAULT_DATABASE_URL)}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

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
STATIC_ROOT = Path(env_str("STATIC_ROOT", str(BASE_DIR / "staticfiles")))
STATICFILES_DIRS = [BASE_DIR / "static"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}

# Input limits: every request body is bounded before parsing.
DATA_UPLOAD_MAX_MEMORY_SIZE = env_int("HX_MAX_BODY_BYTES", 16 * 1024 * 1024)
FILE_UPLOAD_MAX_MEMORY_SIZE = DATA_UPLOAD_MAX_MEMORY_SIZE
DATA_UPLOAD_MAX_NUMBER_FIELDS = 10_000
HX_MAX_BODY_BYTES = DATA_UPLOAD_MAX_MEMORY_SIZE
HX_MAX_JSON_DEPTH = 32
HX_MAX_NODES_PER_MACHINE = 1_048_576
HX_DEFAULT_POLICY = env_str("HX_DEFAULT_POLICY", "diagonal")
# Slurm: the client commands read this slurm.conf (Slurm's own SLURM_CONF when
# unset); every command has a timeout. A machine linked to Slurm is synced by beat
# every HX_SLURM_SYNC_INTERVAL seconds (per machine on its page), at most
# HX_SLURM_SYNC_MAX_JOBS jobs a run; accounting (sacct) is read when slurmdbd
# answers ("auto"), always ("on", its failure fails the sync) or never ("off").
HX_SLURM_CONF = env_str("HX_SLURM_CONF") or env_str("SLURM_CONF") or ""
HX_SLURM_TIMEOUT = env_int("HX_SLURM_TIMEOUT", 30, minimum=1)
HX_SLURM_SYNC_INTERVAL = env_int("HX_SLURM_SYNC_INTERVAL", 60, minimum=5)
HX_SLURM_SYNC_MAX_JOBS = env_int("HX_SLURM_SYNC_MAX_JOBS", 5000, minimum=1)
HX_SLURM_HISTORY_DAYS = env_int("HX_SLURM_HISTORY_DAYS", 31, minimum=1)
HX_SLURM_ACCOUNTING = env_str("HX_SLURM_ACCOUNTING", "auto")
# The site's prolog gives dropped spares back to Slurm after the benchmark
# (hx-prolog-bench's default): spare recommendations then count them at their
# benchmark time only. Off: spares are held for the whole job.
HX_SPARES_RELEASED = env_bool("HX_SPARES_RELEASED", True)
# A simulation whose estimated peak memory (simulation.engine.memory) is above this
# many bytes is refused (400 naming the fields); the worker process adds ~250 MB.
HX_SIM_MAX_BYTES = env_int("HX_SIM_MAX_BYTES", 1 << 30)
# Calibrations (recommendations/services/calibration.py): beat starts one for each
# machine shape that has none on the running engine, so recommendations on machines
# too large to simulate live within the deadline are answered "calibrated".
HX_CALIBRATE_AUTOMATICALLY = env_bool("HX_CALIBRATE_AUTOMATICALLY", True)
# Worker processes a recommendation's live simulations can count on (the live path is
# taken only when the expected simulation time over these fits the deadline).
HX_PREDICTION_PROCESSES = env_int("HX_PREDICTION_PROCESSES", 2, minimum=1)
# Engine seeds of each policy's live prediction (the answer ranks by their mean): each
# seed draws the other jobs' traffic anew, so more seeds order close policies better on
# a loaded machine, at that many times the runs (docs/operations.md).
HX_PREDICTION_SEEDS = env_int("HX_PREDICTION_SEEDS", 2, minimum=1)
# When those seeds split on the fastest policy, the fastest and its rivals run more
# seeds while the deadline leaves time, up to this many in all (HX_PREDICTION_SEEDS or
# fewer: never); docs/operations.md "When the live seeds disagree".
HX_PREDICTION_MAX_SEEDS = env_int("HX_PREDICTION_MAX_SEEDS", 6, minimum=1)
# On: viewers and operators read only their own jobs, recommendations, runs and
# sweeps (hxportal/ownership.py), like Slurm's PrivateData; off: everyone reads all.
HX_PRIVATE_DATA = env_bool("HX_PRIVATE_DATA", False)
# /metrics (Prometheus): a token (any scope but benchmarks; "metrics" tokens reach
# only this) or a client address in one of these networks (CIDR, comma-separated;
# empty: tokens only). The address is the one sign-in throttling uses
# (HX_TRUSTED_PROXY_COUNT). Checked at start-up (metrics/checks.py).
HX_METRICS_ALLOWED_NETS = env_list("HX_METRICS_ALLOWED_NETS", [])
# Whether ``hx_demo`` may give its demo admin the password "admin": local
# development settings only; everywhere else a real password must be given.
HX_DEMO_DEFAULT_ADMIN = False

# Sign-in throttling (django-axes, counts in the database so every worker shares them;
# hxportal/signin.py and docs/operations.md "Sign-in throttling").
HX_LOGIN_FAILURE_LIMIT = env_int("HX_LOGIN_FAILURE_LIMIT", 5, minimum=1)
HX_LOGIN_ACCOUNT_FAILURE_LIMIT = env_int("HX_LOGIN_ACCOUNT_FAILURE_LIMIT", 20, minimum=1)
HX_LOGIN_COOLOFF_SECONDS = env_int("HX_LOGIN_COOLOFF_SECONDS", 900, minimum=1)
HX_TRUSTED_PROXY_COUNT = env_int("HX_TRUSTED_PROXY_COUNT", 0, minimum=0)
AXES_HANDLER = "hxportal.signin.PairAndAccountHandler"
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_FAILURE_LIMIT = HX_LOGIN_FAILURE_LIMIT
AXES_COOLOFF_TIME = timedelta(seconds=HX_LOGIN_COOLOFF_SECONDS)
AXES_CLIENT_IP_CALLABLE = "hxportal.signin.client_address"
AXES_LOCKOUT_CALLABLE = "hxportal.signin.lockout_response"
AXES_RESET_ON_SUCCESS = True  # the owner's own typos are forgotten once they sign in
# A refused attempt is not recorded: the cool-off runs from the last real failure and
# hammering a locked pair writes nothing.
AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT = False
AXES_DISABLE_ACCESS_LOG = True  # failures are what matters; no row per successful sign-in
# Log lines name the account and address (operators need both); passwords never appear.
AXES_SENSITIVE_PARAMETERS: list[str] = []

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "hxportal.api.authentication.HashedTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["hxportal.api.permissions.RolePermission"],
    "DEFAULT_PARSER_CLASSES": [
        "hxportal.api.parsers.SafeJSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    "DEFAULT_PAGINATION_CLASS": "hxportal.api.pagination.CappedLimitOffsetPagination",
    "PAGE_SIZE": 50,
    "DEFAULT_FILTER_BACKENDS": ["hxportal.api.filters.StrictFilterBackend"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "hxportal.api.exceptions.exception_handler",
}

SPECTACULAR_SETTINGS = {
    "TITLE": "hxportal API",
    "DESCRIPTION": "HyperX machines, nodes, jobs, allocation and spare-node recommendations.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    # Operation ids and tags are the path after /api/ (v1_jobs_list, tag v1), as they
    # were before /metrics, a view outside /api/, moved the common prefix to "/".
    "SCHEMA_PATH_PREFIX": r"/api/",
    # Several models have a "status" field with different choices: name each set.
    "ENUM_NAME_OVERRIDES": {
        "JobStatusEnum": "allocation.choices.JobStatus",
        "SourceEnum": "allocation.choices.JobSource",
        "RunStatusEnum": "hxportal.models.RunStatus",
        "RecommendationStatusEnum": "recommendations.choices.RecommendationStatus",
        "SweepStatusEnum": "simulation.choices.SweepStatus",
        "NodeStateEnum": "allocation.choices.NodeState",
        "PolicyEnum": "allocation.hyperx.ONLINE_POLICIES",
        "WorkloadFormatEnum": "whatif.choices.WorkloadFormat",
    },
    "SERVE_PERMISSIONS": ["rest_framework.permissions.IsAuthenticated"],
}

# Celery: JSON only, late acks and redelivery-safe tasks (the row is the truth).
CELERY_BROKER_URL = env_str("CELERY_BROKER_URL") or "filesystem://"
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SOFT_TIME_LIMIT = env_int("HX_TASK_SOFT_TIME_LIMIT", 3300)
CELERY_TASK_TIME_LIMIT = env_int("HX_TASK_TIME_LIMIT", 3600)
CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER", False)
# A simulation run longer than one task may take (a large machine's calibration point
# runs for hours) saves its state every HX_SIM_CHECKPOINT_SECONDS to a file in
# HX_CHECKPOINT_DIR and, after HX_SIM_SLICE_SECONDS in one task, continues in a new
# task from there; a killed worker's next attempt resumes from the last save. The
# folder must be shared by every worker host; 0 turns slices off. docs/operations.md.
HX_CHECKPOINT_DIR = Path(env_str("HX_CHECKPOINT_DIR", str(DATA_DIR / "checkpoints")))
HX_SIM_CHECKPOINT_SECONDS = env_int("HX_SIM_CHECKPOINT_SECONDS", 600, minimum=1)
HX_SIM_SLICE_SECONDS = env_int("HX_SIM_SLICE_SECONDS", max(0, CELERY_TASK_SOFT_TIME_LIMIT - 300),
                               minimum=0)
_task_limit = CELERY_TASK_SOFT_TIME_LIMIT or CELERY_TASK_TIME_LIMIT  # 0: none
if HX_SIM_SLICE_SECONDS and _task_limit and HX_SIM_SLICE_SECONDS >= _task_limit:
    raise ImproperlyConfigured(
        f"HX_SIM_SLICE_SECONDS ({HX_SIM_SLICE_SECONDS}) must be below the task's time limit "
        f"({_task_limit} s, HX_TASK_SOFT_TIME_LIMIT or HX_TASK_TIME_LIMIT), with time to save")
CELERY_BEAT_SCHEDULER = "django_celery_beat.schedulers:DatabaseScheduler"
# Three queues. Bulk work (simulation runs, sweeps, estimations) stays on the
# default queue; recommendation predictions (a 30 s deadline) and the short
# maintenance tasks get their own, so neither waits behind a sweep's backlog: a
# worker consuming several queues takes from each in turn, and a second small
# worker consuming only the two short queues (scripts/run.sh, docker-compose.yml)
# answers them even while every process of the main worker runs a long simulation.
HX_DEFAULT_QUEUE = "celery"  # Celery's default name: messages queued before stay valid
HX_INTERACTIVE_QUEUE = "hx-interactive"
HX_MAINTENANCE_QUEUE = "hx-maintenance"
HX_QUEUES = (HX_DEFAULT_QUEUE, HX_INTERACTIVE_QUEUE, HX_MAINTENANCE_QUEUE)
CELERY_TASK_DEFAULT_QUEUE = HX_DEFAULT_QUEUE
# Declared, so a worker started without -Q consumes all three.
CELERY_TASK_QUEUES = [Queue(name, Exchange(name, type="direct"), routing_key=name)
                      for name in HX_QUEUES]
CELERY_TASK_ROUTES = {
    "allocation.tasks.predict_policy": {"queue": HX_INTERACTIVE_QUEUE},
    "allocation.tasks.expire_recommendations": {"queue": HX_MAINTENANCE_QUEUE},
    "allocation.tasks.estimate_all_machines": {"queue": HX_MAINTENANCE_QUEUE},
    "hxportal.tasks.resend_unsent_runs": {"queue": HX_MAINTENANCE_QUEUE},
    "hxportal.tasks.recover_stale_runs": {"queue": HX_MAINTENANCE_QUEUE},
    # Short and time-critical (the page's "sync now", the occupancy recommendations read).
    "hx.slurm.sync_due": {"queue": HX_MAINTENANCE_QUEUE},
    "hx.slurm.sync_machine": {"queue": HX_MAINTENANCE_QUEUE},
    "hx.metrics.refresh_health_snapshots": {"queue": HX_MAINTENANCE_QUEUE},
    "hx.recommendations.calibrate_machines": {"queue": HX_MAINTENANCE_QUEUE},
    "hx.recommendations.refresh_calibrations": {"queue": HX_MAINTENANCE_QUEUE},
}
# A running tracked run writes a heartbeat every quarter of the lease; a run
# silent for a whole lease lost its worker (killed outright: nothing requeues
# its message before the visibility timeout) and is queued again, at most
# HX_RUN_MAX_ATTEMPTS claims in all, then failed with the reason.
HX_RUN_LEASE_SECONDS = env_int("HX_RUN_LEASE_SECONDS", 120)
HX_RUN_MAX_ATTEMPTS = env_int("HX_RUN_MAX_ATTEMPTS", 3)
if HX_RUN_LEASE_SECONDS < 2 or HX_RUN_MAX_ATTEMPTS < 1:
    raise ImproperlyConfigured("HX_RUN_LEASE_SECONDS must be at least 2 and "
                               "HX_RUN_MAX_ATTEMPTS at least 1")
CELERY_TIMEZONE = TIME_ZONE
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# Cold shutdown (SIGQUIT: scripts/run.sh, compose's stop_signal) gives running
# tasks this long to finish, then cancels them; late acks put their messages
# back on the broker, so the next worker runs them again.
CELERY_WORKER_SOFT_SHUTDOWN_TIMEOUT = env_int("HX_WORKER_SHUTDOWN_GRACE", 3)
if CELERY_BROKER_URL.startswith("filesystem://"):
    _broker_dir = Path(env_str("HX_BROKER_DIR", str(DATA_DIR / "broker")))
    for _sub in ("queue", "processed", "control"):
        (_broker_dir / _sub).mkdir(parents=True, exist_ok=True)
    # kombu's filesystem transport writes a message in place, so a worker could read
    # it half-written; this one renames whole messages in (hxportal/broker.py).
    CELERY_BROKER_TRANSPORT = "hxportal.broker:WholeMessageTransport"
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(_broker_dir / "queue"),
        "data_folder_out": str(_broker_dir / "queue"),
        "processed_folder": str(_broker_dir / "processed"),
        "control_folder": str(_broker_dir / "control"),
        "store_processed": False,
        # kombu's virtual transports sleep this long when every queue is empty (its
        # default is 1 s); each hop of a recommendation's chain of tasks waited for it.
        "polling_interval": env_int("HX_BROKER_POLL_MS", 100, minimum=10) / 1000,
    }
else:
    # Longer than the hard time limit, so a slow task is never redelivered
    # while it still runs; it is also how long the message of a worker killed
    # outright (no chance to requeue) waits before another worker takes it.
    CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": env_int(
        "HX_VISIBILITY_TIMEOUT", CELERY_TASK_TIME_LIMIT + 600)}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"redact_tokens": {"()": "hxportal.logging.RedactTokensFilter"}},
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "formatter": "plain",
            "filters": ["redact_tokens"],
        }
    },
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
    "loggers": {"django.db.backends": {"level": "WARNING"},
                "axes": {"level": "WARNING"}},  # failures and lockouts, not housekeeping
}

# Security headers that apply everywhere (production tightens the rest).
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = "Lax"
CSRF_COOKIE_SAMESITE = "Lax"
HX_CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "object-src 'none'; base-uri 'self'; frame-ancestors 'none'; form-action 'self'"
)
