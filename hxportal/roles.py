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


#: What :func:`page_role` answers for a page that states no role and is not open.
UNDECLARED = "undeclared"


def page_role(view) -> str | None:
    """The role a page needs, read from where it is declared: the view class's
    ``required_role`` (``RoleRequiredMixin``; None: no role, as for signing out);
    None for a page marked open to signed-out visitors (``login_not_required``);
    :data:`UNDECLARED` otherwise.
    ``view`` is the URL's callback or the view class."""
    cls = getattr(view, "view_class", None) or getattr(view, "cls", None) or view
    if hasattr(cls, "required_role"):
        role = cls.required_role
        return None if role is None else str(role)
    dispatch = getattr(cls, "dispatch", None)
    if False in (getattr(view, "login_required", True), getattr(dispatch, "login_required", True)):
        return None
    return UNDECLARED
