"""Write path for users and tokens (the framework's own rows)."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.db import transaction

from hxportal.models import ApiToken
from hxportal.roles import Role


@transaction.atomic
def upsert_user(username: str, role: str, *, email: str = "",
                password: str | None = None) -> tuple[object, bool]:
    """Create or update a user with ``role``; return (user, created)."""
    if role not in Role.values:
        raise ValidationError({"role": [f"must be one of {', '.join(Role.values)}"]})
    user_model = get_user_model()
    user, created = user_model.objects.get_or_create(username=username)
    user.role = role
    user.is_staff = role == Role.ADMIN
    user.is_superuser = role == Role.ADMIN
    if email:
        user.email = email
    if password:
        user.set_password(password)
    elif created:
        user.set_unusable_password()
    user.full_clean()
    user.save()
    return user, created


def issue_token(user, name: str = "script", **flags) -> str:
    """Issue a token and return the clear key; it is never retrievable again."""
    _, key = ApiToken.issue(user, name, **flags)
    return key
