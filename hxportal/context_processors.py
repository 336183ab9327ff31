"""Template flags for what the signed-in user's role allows."""

from hxportal.roles import Role, role_at_least


def roles(request) -> dict:
    user = getattr(request, "user", None)
    return {
        "can_operate": role_at_least(user, Role.OPERATOR),
        "can_admin": role_at_least(user, Role.ADMIN),
    }
