"""Production settings: refuse to start without secrets; HTTPS everywhere."""

from __future__ import annotations

from hxportal.settings.base import *
from hxportal.settings.env import env_bool, env_int, env_list, require

SECRET_KEY = require("SECRET_KEY")
require("DATABASE_URL")
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", [])
if not ALLOWED_HOSTS:
    require("ALLOWED_HOSTS")
DEBUG = False

SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", True)
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 31_536_000)
SECURE_HSTS_INCLUDE_SUBDOMAINS = True
SECURE_HSTS_PRELOAD = True
SESSION_COOKIE_SECURE = True
CSRF_COOKIE_SECURE = True
CSRF_COOKIE_HTTPONLY = True
