"""The portal's handle on Slurm: the client from the settings, each machine's link,
and carrying the portal's node-state decisions out in Slurm.

A machine is linked to Slurm once it has a :class:`SlurmLink` that is enabled (or
has synced once); only then do the portal's drains and resumes go to Slurm. An
unlinked machine keeps its states in the portal alone, as before.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from django.conf import settings
from django.utils import timezone

from allocation.choices import NodeEventSource, NodeState
from allocation.models import Machine, Node, NodeEvent, SlurmLink
from allocation.slurm import SlurmClient, SlurmError
from hxportal.errors import ConflictError

#: The portal account that owns Slurm jobs of users the portal does not know.
SLURM_OWNER = "hx-slurm"


class SlurmUnavailable(ConflictError):
    """Slurm refused or could not be reached; nothing was changed (HTTP 409)."""


def client() -> SlurmClient:
    """A client for the site's Slurm (``HX_SLURM_CONF`` / ``SLURM_CONF``)."""
    return SlurmClient(conf=settings.HX_SLURM_CONF or None,
                       timeout=float(settings.HX_SLURM_TIMEOUT))


def link_for(machine: Machine) -> SlurmLink:
    """The machine's link row, made on first use with the default interval."""
    link, _ = SlurmLink.objects.get_or_create(
        machine=machine, defaults={"interval_seconds": settings.HX_SLURM_SYNC_INTERVAL})
    return link


def linked_link(machine: Machine) -> SlurmLink | None:
    """The link when the machine is linked to Slurm (enabled, or synced once)."""
    link = SlurmLink.objects.filter(machine=machine).first()
    if link is None or not (link.enabled or link.last_success_at):
        return None
    return link


@dataclass(frozen=True)
class StateChange:
    """A node-state change to audit: the node, its state before, and the new one."""

    node: Node
    previous: str


def carry_out(machine: Machine, hostnames: Sequence[str], state: str, reason: str,
              slurm: SlurmClient | None = None) -> bool:
    """Drain, down or resume ``hostnames`` in Slurm when the machine is linked; True
    when Slurm carried it out, False when the machine is not linked. A refusal or
    an unreachable Slurm is :class:`SlurmUnavailable` (the caller writes nothing)."""
    if linked_link(machine) is None:
        return False
    slurm = slurm or client()
    try:
        if state == NodeState.UP:
            slurm.resume(hostnames)
        elif state == NodeState.DRAINED:
            slurm.drain(hostnames, reason)
        else:
            slurm.down(hostnames, reason)
    except SlurmError as exc:
        raise SlurmUnavailable(f"Slurm did not carry it out: {exc}", field="hostlist") from exc
    return True


def not_free(hostnames: Sequence[str], slurm: SlurmClient | None = None) -> set[str]:
    """Which of ``hostnames`` Slurm would not start a job on right now (allocated,
    completing, drained, down or not responding); raises :class:`SlurmUnavailable`."""
    try:
        nodes = {n.name: n for n in (slurm or client()).nodes()}
    except SlurmError as exc:
        raise SlurmUnavailable(f"Slurm cannot be read now: {exc}", field="machine") from exc
    return {h for h in hostnames if h not in nodes or not nodes[h].idle}


def audit(changes: Sequence[StateChange], state: str, reason: str, *, source: str,
          user=None, in_slurm: bool) -> None:
    """One :class:`NodeEvent` per node whose state or reason changed."""
    now = timezone.now()
    NodeEvent.objects.bulk_create([
        NodeEvent(node=c.node, state=state, previous_state=c.previous, reason=reason[:255],
                  source=source, user=user, in_slurm=in_slurm, at=now) for c in changes],
        batch_size=2000)


def link_status(machine: Machine) -> dict | None:
    """What the pages, the API and the metrics show of a machine's Slurm link:
    None when the machine was never linked; ``age_seconds`` since the last
    successful sync (None before the first)."""
    link = SlurmLink.objects.filter(machine=machine).first()
    if link is None:
        return None
    now = timezone.now()
    age = (now - link.last_success_at).total_seconds() if link.last_success_at else None
    return {"enabled": link.enabled, "partition": link.partition,
            "interval_seconds": link.interval_seconds,
            "last_attempt_at": link.last_attempt_at, "last_success_at": link.last_success_at,
            "age_seconds": round(age, 1) if age is not None else None,
            "last_error": link.last_error, "last_error_at": link.last_error_at,
            "consecutive_failures": link.consecutive_failures,
            "failures_total": link.failures_total, "syncs_total": link.syncs_total,
            "last_duration_seconds": link.last_duration_seconds,
            "last_counts": link.last_counts,
            "healthy": bool(link.last_success_at) and link.consecutive_failures == 0}


__all__ = [
    "SLURM_OWNER",
    "NodeEventSource",
    "SlurmError",
    "SlurmUnavailable",
    "StateChange",
    "audit",
    "carry_out",
    "client",
    "link_for",
    "link_status",
    "linked_link",
    "not_free",
]
