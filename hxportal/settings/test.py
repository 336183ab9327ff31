"""Test settings: fast hashing, a file-backed SQLite test database.

The database is a file (not ``:memory:``) so that a real Celery worker process
started by the tests sees the same rows.
"""

from __future__ import annotations

from hxportal.settings.base import *
from hxportal.settings.base import DATA_DIR, DATABASES
from hxportal.settings.env import env_str

SECRET_KEY = env_str("SECRET_KEY") or "test-only-secret-key-not-for-production-use-0123456789"
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
DEBUG = False
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    DATABASES["default"]["TEST"] = {"NAME": str(DATA_DIR / "test-hxportal.sqlite3")}
WHITENOISE_USE_FINDERS = True
WHITENOISE_AUTOREFRESH = True
STATIC_ROOT = DATA_DIR / "static-root"
STATIC_ROOT.mkdir(parents=True, exist_ok=True)
DATABASES["default"]["CONN_MAX_AGE"] = 0  # live-server threads must not keep the test DB open
# Calibrations start only where a test asks for one (a default grid is hundreds of runs).
HX_CALIBRATE_AUTOMATICALLY = False
