"""The only write path of the allocation app: every change to its rows goes here.

Views, API views, commands and tasks call these functions; they validate,
write inside one transaction and raise ``ValidationError`` (naming the field)
or ``ConflictError`` so nothing is ever half-written.
"""

from __future__ import annotations

from collections.abc import Sequence

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone

from allocation.choices import NodeEventSource
from allocation.hyperx import ONLINE_POLICIES
from allocation.layout import (
    LayoutError,
    default_hostname_pattern,
    pattern_hostnames,
    validate_shape,
)
from allocation.models import Machine, Node, NodeState, SiteSettings
from allocation.models.machines import NAME_VALIDATOR
from allocation.services import slurm
from hxportal import hostlists
from hxportal.batching import LOOKUP_CHUNK, chunks
from hxportal.errors import ConflictError

NODE_BATCH = 5000


def _layout_error(exc: LayoutError) -> ValidationError:
    return ValidationError({exc.field: [exc.message]})


def machine_hostnames(name: str, sides: Sequence[int], concentration: int,
                      hostname_pattern: str = "", hostlist: str = "") -> list[str]:
    """The hostname of every endpoint in index order, from a hostlist or a pattern."""
    try:
        shape = validate_shape(list(sides), concentration)
    except LayoutError as exc:
        raise _layout_error(exc) from exc
    if hostlist and hostname_pattern:
        raise ValidationError({"hostlist": ["give either a hostlist or a hostname_pattern"]})
    if hostlist:
        try:
            names = hostlists.expand(hostlist, max_nodes=shape.node_count + 1)
        except hostlists.HostlistError as exc:
            raise ValidationError({"hostlist": [str(exc)]}) from exc
        if len(names) != shape.node_count:
            raise ValidationError({"hostlist": [
                f"names {len(names)} nodes but the machine has {shape.node_count}"]})
        bad = [n for n in names[:1_000_000] if not Node.hostname_is_valid(n)]
        if bad:
            raise ValidationError({"hostlist": [f"invalid hostname {bad[0]!r}"]})
        return names
    pattern = hostname_pattern or default_hostname_pattern(name, shape.node_count)
    # Without a pattern the hostnames come from the machine's name: say so there.
    culprit = "hostname_pattern" if hostname_pattern else "name"
    try:
        names = pattern_hostnames(shape, pattern, name)
    except LayoutError as exc:
        if culprit == "name":
            raise ValidationError({"name": [
                f"cannot name the nodes after it ({exc.message}); give a hostname pattern"
            ]}) from exc
        raise _layout_error(exc) from exc
    bad = [n for n in names if not Node.hostname_is_valid(n)]
    if bad:
        raise ValidationError({culprit: [
            f"gives invalid hostname {bad[0]!r}" if culprit == "hostname_pattern" else
            f"gives invalid node names such as {bad[0]!r} (at most 63 letters, digits, '_', "
            "'.' or '-'); choose a shorter name or give a hostname pattern"]})
    return names


@transaction.atomic
def create_machine(*, name: str, sides: Sequence[int], concentration: int,
                   hostname_pattern: str = "", hostlist: str = "",
                   description: str = "") -> Machine:
    """Create a machine and all its nodes in one transaction."""
    try:  # first: the default hostnames derive from the name, so a bad name is the name's
        NAME_VALIDATOR(name)
    except ValidationError as exc:
        raise ValidationError({"name": exc.messages}) from exc
    if Machine.objects.filter(name=name).exists():
        raise ConflictError(f"a machine named {name!r} already exists", field="name")
    names = machine_hostnames(name, sides, concentration, hostname_pattern, hostlist)
    shape = validate_shape(list(sides), concentration)
    machine = Machine(name=name, sides=list(shape.sides), concentration=concentration,
                      hostname_pattern="" if hostlist else (
                          hostname_pattern or default_hostname_pattern(name, shape.node_count)),
                      hostlist=hostlist, description=description)
    machine.full_clean()
    machine.save()
    indices = range(shape.node_count)  # each node's place: the shape's maps
    places = zip(shape.switch_of(indices).tolist(), shape.node_coords().tolist(),
                 shape.local_of(indices).tolist(), strict=True)
    now = timezone.now()
    Node.objects.bulk_create(
        (Node(machine=machine, index=i, switch=switch, coords=xs, local=local,
              hostname=names[i], state=NodeState.UP, state_changed_at=now)
         for i, (switch, xs, local) in enumerate(places)),
        batch_size=NODE_BATCH)
    return machine


@transaction.atomic
def update_machine(machine: Machine, *, description: str) -> Machine:
    machine.description = description
    machine.full_clean()
    machine.save(update_fields=["description"])
    return machine


@transaction.atomic
def delete_machine(machine: Machine) -> None:
    if machine.jobs.filter(allocations__released_at__isnull=True).exists():
        raise ConflictError("the machine has jobs holding nodes; release them first")
    machine.delete()


def resolve_hostlist(machine: Machine, hostlist: str, field: str = "hostlist") -> list[Node]:
    """The nodes of ``machine`` named by ``hostlist``, in index order.

    Unknown names are a ValidationError naming ``field``. Large lists are matched
    in Python against the machine's names, which keeps every query's parameter
    count small (SQLite caps it).
    """
    try:
        names = hostlists.expand(hostlist, max_nodes=machine.node_count)
    except hostlists.HostlistError as exc:
        raise ValidationError({field: [str(exc)]}) from exc
    if not names:
        raise ValidationError({field: ["names no nodes"]})
    wanted = set(names)
    candidates = machine.nodes.all() if len(wanted) > LOOKUP_CHUNK else \
        machine.nodes.filter(hostname__in=wanted)
    nodes = [n for n in candidates.only("id", "hostname", "index", "switch", "local",
                                        "coords", "state", "machine_id").order_by("index")
             if n.hostname in wanted]
    if len(nodes) != len(wanted):
        known = {n.hostname for n in nodes}
        unknown = [n for n in names if n not in known]
        raise ValidationError({field: [
            f"unknown nodes on machine {machine.name}: {hostlists.compress(unknown)}"]})
    return nodes


def check_node_state(machine: Machine, hostlist: str, state: str,
                     reason: str = "") -> list[Node]:
    """Validate a state change without writing: the nodes it would change."""
    if state not in NodeState.values:
        raise ValidationError({"state": [f"must be one of {', '.join(NodeState.values)}"]})
    if state != NodeState.UP and not reason.strip():
        raise ValidationError({"reason": ["a reason is required to drain or down nodes"]})
    return resolve_hostlist(machine, hostlist)


def set_node_state(machine: Machine, hostlist: str, state: str,
                   reason: str = "", user=None) -> list[Node]:
    """Change the state of every node named by ``hostlist``; all or nothing, audited.

    On a machine linked to Slurm the change is carried out in Slurm first (drain,
    down or resume with the reason); if Slurm refuses or cannot be reached, nothing
    changes here either (:class:`~allocation.services.slurm.SlurmUnavailable`).
    """
    nodes = check_node_state(machine, hostlist, state, reason)
    reason = reason.strip()[:255] if state != NodeState.UP else ""
    in_slurm = slurm.carry_out(machine, [n.hostname for n in nodes], state, reason)
    now = timezone.now()
    with transaction.atomic():
        changed = [slurm.StateChange(n, n.state) for n in nodes
                   if (n.state, n.state_reason) != (state, reason)]
        for chunk in chunks([n.pk for n in nodes], LOOKUP_CHUNK):
            Node.objects.filter(pk__in=chunk).update(
                state=state, state_reason=reason, state_changed_at=now)
        slurm.audit(changed, state, reason, source=NodeEventSource.PORTAL, user=user,
                    in_slurm=in_slurm)
    return nodes


@transaction.atomic
def rename_node(node: Node, hostname: str) -> Node:
    """Give a node a new hostname; a name already used on the machine is a conflict."""
    if not Node.hostname_is_valid(hostname):
        raise ValidationError({"hostname": ["not a valid hostname"]})
    taken = Node.objects.filter(machine_id=node.machine_id, hostname=hostname)
    if taken.exclude(pk=node.pk).exists():
        raise ConflictError(f"hostname {hostname!r} is already used on this machine",
                            field="hostname")
    node.hostname = hostname
    try:
        with transaction.atomic():
            node.save(update_fields=["hostname"])
    except IntegrityError as exc:
        raise ConflictError(f"hostname {hostname!r} is already used on this machine",
                            field="hostname") from exc
    return node


# --------------------------------------------------------------------------
# Site settings


def site_settings() -> SiteSettings:
    """The one row of site settings (unsaved and blank when none was stored)."""
    return SiteSettings.objects.order_by("pk").first() or SiteSettings()


def default_policy() -> str:
    """The site's default policy: the admin's choice in the database, else the
    ``HX_DEFAULT_POLICY`` environment setting."""
    stored = SiteSettings.objects.order_by("pk").values_list("default_policy", flat=True).first()
    return stored or settings.HX_DEFAULT_POLICY


@transaction.atomic
def set_site_settings(*, default_policy: str = "", user=None) -> SiteSettings:
    """Store the site settings; a blank default policy falls back to the environment."""
    policy = (default_policy or "").strip()
    if policy and policy not in ONLINE_POLICIES:
        raise ValidationError({"default_policy": [
            f"unknown policy {policy!r}; one of {', '.join(ONLINE_POLICIES)}"]})
    row = SiteSettings.objects.select_for_update().order_by("pk").first() or SiteSettings()
    row.default_policy = policy
    row.updated_at = timezone.now()
    row.updated_by = user if getattr(user, "pk", None) else None
    row.save()
    return row
