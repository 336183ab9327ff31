"""Development settings: a generated secret kept in the data folder."""

from __future__ import annotations

import secrets

from hxportal.settings.base import *
from hxportal.settings.base import DATA_DIR
from hxportal.settings.env import env_str


def _local_secret_key() -> str:
    """Generate the secret once and keep it, so sessions survive restarts."""
    path = DATA_DIR / "secret_key"
    if path.exists():
        return path.read_text().strip()
    DATA_DIR.mkdir(parents=True, exist_ok=True)
    key = secrets.token_urlsafe(50)
    path.write_text(key)
    path.chmod(0o600)
    return key


SECRET_KEY = env_str("SECRET_KEY") or _local_secret_key()
# ``make run`` seeds the documented demo admin (admin / admin) with ``hx_demo``.
HX_DEMO_DEFAULT_ADMIN = True
# Serve static files straight from the source folders while developing.
WHITENOISE_USE_FINDERS = True
STATIC_ROOT.mkdir(parents=True, exist_ok=True)  # WhiteNoise wants it to exist
