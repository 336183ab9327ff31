"""Who reads and who changes owned rows (jobs, recommendations, simulation runs,
sweeps): one rule for the API and the pages.

Changes are the owner's; admins change any row. Reads are everyone's signed in
(the machine's occupancy is everyone's business), unless ``HX_PRIVATE_DATA`` is
on: then, as with Slurm's ``PrivateData``, viewers and operators read only
their own rows and admins read all. Another's row is then a 404, as for writes,
so its existence is not revealed.
"""

from __future__ import annotations

from django.conf import settings
from django.db.models import QuerySet

from hxportal.roles import Role, role_at_least


def reads_everything(user) -> bool:
    """True when ``user`` may read every owned row (not only their own)."""
    return not settings.HX_PRIVATE_DATA or role_at_least(user, Role.ADMIN)


def readable(queryset: QuerySet, user, owner_field: str) -> QuerySet:
    """The rows of ``queryset`` that ``user`` may read."""
    if reads_everything(user):
        return queryset
    return queryset.filter(**{owner_field: user})


def may_change(user, owner_id: int | None) -> bool:
    """True when ``user`` may change a row owned by ``owner_id``: admins, or the
    owning operator."""
    return role_at_least(user, Role.ADMIN) or (
        role_at_least(user, Role.OPERATOR) and owner_id == user.pk)


def writable(queryset: QuerySet, user, owner_field: str) -> QuerySet:
    """The rows of ``queryset`` that ``user`` may change: their own, or all for admins."""
    if role_at_least(user, Role.ADMIN):
        return queryset
    return queryset.filter(**{owner_field: user})
