"""The three roles and their order: each role can do what the ones below it can."""

from __future__ import annotations

from django.db import models


class Role(models.TextChoices):
    VIEWER = "viewer", "Viewer"
    OPERATOR = "operator", "Operator"
    ADMIN = "admin", "Admin"


ROLE_RANK = {Role.VIEWER: 1, Role.OPERATOR: 2, Role.ADMIN: 3}


def role_at_least(user, role: str) -> bool:
    """True when ``user`` is signed in and holds ``role`` or a higher one."""
    if user is None or not user.is_authenticated:
        return False
    if user.is_superuser:
        return True
    return ROLE_RANK.get(getattr(user, "role", None), 0) >= ROLE_RANK[Role(role)]
