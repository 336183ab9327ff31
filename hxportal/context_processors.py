"""Template flags and links for what the signed-in user's role allows."""

from hxportal.navigation import links_for
from hxportal.roles import Role, role_at_least


def roles(request) -> dict:
    user = getattr(request, "user", None)
    return {
        "can_operate": role_at_least(user, Role.OPERATOR),
        "can_admin": role_at_least(user, Role.ADMIN),
    }


def navigation(request) -> dict:
    """The top bar's links the signed-in user's role may open (:mod:`hxportal.navigation`)."""
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {"nav_links": []}
    return {"nav_links": links_for(user)}
