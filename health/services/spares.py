"""Spare nodes: how many to add to a job (the cost model of :mod:`health.maths`, with
parameters given or from the machine's latest estimate), and which of a job's nodes
to keep once each has run the benchmark."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction

from allocation.layout import MAX_NODES
from allocation.models import Allocation, AllocationRole, Job, Machine, Node, NodeState
from health import maths
from health.models import Estimate
from health.services.estimation import LATEST, latest_estimate
from health.services.parsing import ErrorCollector, check_node, check_seconds
from health.services.suspects import machine_health
from hxportal import hostlists
from hxportal.text import pluralize

MAX_CURVE_POINTS = 2000
#: The largest job the calculator takes: the largest machine the portal builds.
MAX_N_NODE = MAX_NODES

# --------------------------------------------------------------------------
# Spare recommendation

_SPARE_FIELDS = {"n_node", "n_spare", "p_abn", "alpha_abn", "t_bench", "t_cmpt", "t_comm",
                 "wall_time", "compute_fraction", "max_curve_points"}


def _core_error(exc: ValueError) -> ValidationError:
    """The core's ``ValueError`` as a 400 under the field its message starts with."""
    message = str(exc)
    first = message.split(" ", 1)[0]
    if first == "alpha_abn" or first in _SPARE_FIELDS:
        return ValidationError({first: [message]})
    return ValidationError({"non_field_errors": [message]})


def recommend(*, n_node: int, t_cmpt: float | None = None, t_comm: float | None = None,
              wall_time: float | None = None, compute_fraction: float | None = None,
              machine: Machine | None = None, benchmark: str = "",
              p_abn: float | None = None, alpha_abn: float | None = None,
              t_bench: float | None = None, per_node: bool = False,
              max_curve_points: int = MAX_CURVE_POINTS,
              release: bool | None = None,
              estimate: Estimate | object | None = LATEST) -> dict[str, Any]:
    """The spare recommendation, with parameters given or from the machine's latest estimate.

    Give ``t_cmpt`` (and optionally ``t_comm``, default 0) or ``wall_time`` (and
    optionally ``compute_fraction``, default ``DEFAULT_COMPUTE_FRACTION``).
    Parameters not given explicitly come from the latest estimate of ``machine``
    (of ``benchmark`` when given). The curve holds at most ``max_curve_points``.

    ``per_node``: every free node of ``machine`` (up, not allocated) gets its own
    ``p_i``, the posterior mean from its benchmark history (nodes without
    history get ``p_abn``); the least suspicious nodes are chosen first and the
    answer names them (``chosen``, a hostlist of ``n_total`` nodes).

    ``release``: the dropped spares go back to the scheduler after the benchmark
    (``hx-prolog-bench`` shrinks the Slurm job), so they cost only its time;
    None takes the site's ``HX_SPARES_RELEASED``.

    ``estimate``: the estimate to take missing parameters from, read once by a
    caller that asks many times (a recommendation ranks every policy); by default
    the latest of ``machine``.
    """
    release = settings.HX_SPARES_RELEASED if release is None else bool(release)
    if per_node and machine is None:
        raise ValidationError({"per_node": ["needs a machine"]})
    _check_job_size_and_times(n_node, t_cmpt, t_comm, wall_time, compute_fraction)
    t_cmpt, t_comm = _compute_and_communication_times(t_cmpt, t_comm, wall_time,
                                                      compute_fraction)
    given = {"p_abn": p_abn, "alpha_abn": alpha_abn, "t_bench": t_bench}
    parameters, estimate = _model_parameters(given, machine, benchmark, estimate)
    chosen = None
    try:
        params = maths.SpareParameters(**parameters)
        if per_node:
            rec, chosen = _recommend_for_free_nodes(
                machine, estimate.benchmark if estimate else benchmark, params, n_node,
                t_cmpt, t_comm, max_curve_points, release)
        else:
            rec = maths.recommend_spares(n_node, params, t_cmpt=t_cmpt, t_comm=t_comm,
                                          max_curve_points=max_curve_points, release=release)
    except ValueError as exc:
        raise _core_error(exc) from exc
    out = rec.as_dict()
    out.pop("chosen", None)
    out.update(per_node=per_node, chosen=chosen, **_curve_description(rec, n_node),
               parameters_source=_parameters_source(given, estimate),
               estimate=_estimate_description(estimate, machine))
    return out


def _check_job_size_and_times(n_node: Any, t_cmpt: float | None, t_comm: float | None,
                              wall_time: float | None,
                              compute_fraction: float | None) -> None:
    """Refuse a job size out of range and a mix of the two ways to give its times."""
    if isinstance(n_node, bool) or not isinstance(n_node, int) or not 1 <= n_node <= MAX_N_NODE:
        raise ValidationError({"n_node": [f"must be an integer in 1..{MAX_N_NODE}"]})
    if wall_time is not None and (t_cmpt is not None or t_comm is not None):
        raise ValidationError({"wall_time": ["give either wall_time or t_cmpt/t_comm"]})
    if wall_time is None and t_cmpt is None:
        raise ValidationError({"t_cmpt": ["give t_cmpt (and t_comm) or wall_time"]})
    if compute_fraction is not None and wall_time is None:
        raise ValidationError({"compute_fraction": ["only applies with wall_time"]})


def _compute_and_communication_times(t_cmpt: float | None, t_comm: float | None,
                                     wall_time: float | None,
                                     compute_fraction: float | None) -> tuple[float, float]:
    """``(t_cmpt, t_comm)`` as given, or from the wall time (then ``t_comm = 0``)."""
    try:
        if wall_time is not None:
            fraction = (maths.DEFAULT_COMPUTE_FRACTION if compute_fraction is None
                        else compute_fraction)
            return maths.t_cmpt_from_wall(wall_time, fraction), 0.0
    except ValueError as exc:
        raise _core_error(exc) from exc
    return t_cmpt, 0.0 if t_comm is None else t_comm


def _model_parameters(given: dict[str, float | None], machine: Machine | None,
                      benchmark: str, estimate: Estimate | object | None = LATEST
                      ) -> tuple[dict[str, Any], Estimate | None]:
    """``p_abn``, ``alpha_abn`` and ``t_bench``: those given, the others from the
    machine's latest estimate (which is returned too; None when none was needed)."""
    missing = [name for name, value in given.items() if value is None]
    if not missing:
        return dict(given), None
    if machine is None:
        raise ValidationError({name: ["give it, or a machine with a stored estimate"]
                               for name in missing})
    if estimate is LATEST:
        estimate = latest_estimate(machine, benchmark)
    if estimate is None:
        raise ValidationError({"machine": [
            f"machine {machine.name} has no estimate"
            + (f" for benchmark {benchmark!r}" if benchmark else "")
            + f"; run an estimation or give {', '.join(missing)}"]})
    parameters = {name: getattr(estimate, name) if value is None else value
                  for name, value in given.items()}
    if parameters["alpha_abn"] is None:
        raise ValidationError({"alpha_abn": [
            "the latest estimate saw no abnormal run, so it has no alpha_abn; give one"]})
    return parameters, estimate


def _recommend_for_free_nodes(machine: Machine, benchmark: str,
                              params: maths.SpareParameters, n_node: int, t_cmpt: float,
                              t_comm: float, max_curve_points: int, release: bool
                              ) -> tuple[maths.SpareRecommendation, str]:
    """The per-node recommendation over the machine's free nodes, and the hostlist of
    the nodes it chose."""
    names, node_p = _free_node_probabilities(machine, benchmark, params.p_abn)
    if len(names) < n_node:
        raise ValidationError({"n_node": [
            f"machine {machine.name} has only {len(names)} free nodes"]})
    rec = maths.recommend_spares_for_nodes(
        node_p, n_node, params.alpha_abn, params.t_bench, t_cmpt=t_cmpt,
        t_comm=t_comm, max_curve_points=max_curve_points, release=release)
    return rec, hostlists.compress([names[i] for i in rec.chosen or ()])


def _free_node_probabilities(machine: Machine, benchmark: str, default_p: float
                             ) -> tuple[list[str], list[float]]:
    """Hostnames of the machine's free nodes and each one's posterior ``p_i``."""
    # Not ``exclude(allocations__released_at__isnull=True)``: through the LEFT
    # JOIN that also drops nodes that never had an allocation.
    held = Allocation.objects.filter(node__machine=machine, released_at__isnull=True)
    names = list(Node.objects.filter(machine=machine, state=NodeState.UP)
                 .exclude(pk__in=held.values("node_id"))
                 .order_by("index").values_list("hostname", flat=True))
    posterior = {s.node: s.p_posterior
                 for s in machine_health(machine, benchmark).suspicion}
    return names, [posterior.get(name, default_p) for name in names]


def _curve_description(rec: maths.SpareRecommendation, n_node: int) -> dict[str, Any]:
    """How many points the cost curve has and whether it was downsampled."""
    points = len(rec.curve_n_spare)
    last = rec.curve_n_spare[-1] if rec.curve_n_spare else n_node
    evaluated = last + 1
    return {
        "curve_points": points,
        "curve_downsampled": points < evaluated,
        "curve_note": (f"every N_spare from 0 to {last}" if points == evaluated
                       else f"downsampled to {points} evenly spread points of "
                            f"0..{last} (the optimum is exact and always included)"),
    }


def _parameters_source(given: dict[str, float | None], estimate: Estimate | None) -> str:
    """Where the model parameters came from: explicit, estimate or both."""
    if estimate is None:
        return "explicit"
    return "estimate" if all(value is None for value in given.values()) else "estimate+explicit"


def _estimate_description(estimate: Estimate | None,
                          machine: Machine | None) -> dict[str, Any] | None:
    """The estimate the parameters came from (one of ``machine``), as the answer cites it."""
    if estimate is None or machine is None:
        return None
    return {"id": estimate.pk, "machine": machine.name,
            "benchmark": estimate.benchmark, "created_at": estimate.created_at.isoformat(),
            "runs": estimate.runs, "window_start": estimate.window_start.isoformat(),
            "window_end": estimate.window_end.isoformat()}


# --------------------------------------------------------------------------
# Selecting the fastest nodes of a job


def select_fastest(*, n_node: int | None = None, times: dict[str, Any] | None = None,
                   job: Job | None = None, benchmark: str = "",
                   abnormal_threshold: float | None = None) -> dict[str, Any]:
    """Keep the ``n_node`` fastest nodes from given times or a job's stored results.

    With a job, only the job's own nodes count (:func:`job_nodes`): stored times of
    other nodes are ``ignored``, drained or down nodes are never kept
    (``unavailable``), and the job's nodes without a time are dropped (``untimed``),
    so ``keep`` and ``dropped`` together are exactly the job's nodes. When fewer than
    ``n_node`` nodes can be kept, ``short`` says how many are missing."""
    if (times is None) == (job is None):
        raise ValidationError({"times": ["give either times or a job"]})
    unavailable: list[str] = []
    untimed: list[str] = []
    ignored: list[str] = []
    if job is not None:
        benchmark = _job_benchmark(job, benchmark)
        stored = dict(job.benchmark_results.filter(benchmark=benchmark)
                      .values_list("node__hostname", "seconds"))
        states = job_nodes(job) or _machine_states(job, stored)
        times = {host: seconds for host, seconds in stored.items() if host in states}
        ignored = sorted(set(stored) - set(times))
        if not times:
            raise ValidationError({"job": [
                f"job {job.pk} has no {benchmark} times for its own nodes "
                f"({hostlists.compress(states)}); upload them first"]})
        untimed = [host for host in states if host not in times]
        unavailable = [host for host in times if states[host] != NodeState.UP]
        n_node = job.node_count if n_node is None else n_node
    _check_times(times)
    _check_nodes_to_keep(n_node, len(times))
    try:
        sel = maths.select_fastest(times, n_node, abnormal_threshold, unavailable=unavailable)
    except ValueError as exc:
        raise ValidationError({"abnormal_threshold": [str(exc)]}) from exc
    dropped = [*sel.dropped, *untimed]
    return {
        "job": None if job is None else job.pk, "benchmark": benchmark or None,
        "n_node": n_node, "n_keep": len(sel.keep), "n_spare": len(dropped),
        "short": sel.short,
        "keep": hostlists.compress(sel.keep), "dropped": hostlists.compress(dropped),
        "abnormal": hostlists.compress(sel.abnormal),
        "abnormal_kept": hostlists.compress(sel.abnormal_kept),
        "unavailable": hostlists.compress(sel.unavailable),
        "untimed": hostlists.compress(untimed), "ignored": hostlists.compress(ignored),
        "median": sel.median, "ratio_threshold": sel.ratio_threshold, "rule": sel.rule,
    }


def job_nodes(job: Job) -> dict[str, str]:
    """The job's own nodes (hostname -> state), in rank order: those it holds now, or,
    once released, those it last held; empty when the portal never allocated it (a job
    created by the Slurm prolog), and then only its stored results name its nodes."""
    allocations = job.allocations.order_by("rank")
    if allocations.filter(released_at__isnull=True).exists():
        allocations = allocations.filter(released_at__isnull=True)
    return dict(allocations.values_list("node__hostname", "node__state"))


def _machine_states(job: Job, hosts: Any) -> dict[str, str]:
    """Hostname -> state of the named nodes of the job's machine (a job without
    allocations: its nodes are those with stored results)."""
    return dict(Node.objects.filter(machine_id=job.machine_id, hostname__in=sorted(hosts))
                .order_by("index").values_list("hostname", "state"))


def _job_benchmark(job: Job, benchmark: str) -> str:
    """The benchmark of the job's stored results to select on: the one named, or the
    job's only one."""
    names = job_benchmarks(job)
    if not names:
        raise ValidationError({"job": [f"job {job.pk} has no stored benchmark results"]})
    if not benchmark:
        if len(names) > 1:
            raise ValidationError({"benchmark": [
                f"job {job.pk} has several benchmarks ({', '.join(names)}); name one"]})
        return names[0]
    if benchmark not in names:
        raise ValidationError({"benchmark": [
            f"job {job.pk} has no {benchmark!r} results (has: {', '.join(names)})"]})
    return benchmark


def _check_times(times: Any) -> None:
    """Refuse anything but ``{hostname: positive seconds}``, naming each bad entry."""
    if not isinstance(times, dict) or not times:
        raise ValidationError({"times": ["must be a non-empty object {node: seconds}"]})
    errors = ErrorCollector()
    for name, value in times.items():
        if problem := check_node(name):
            errors.add(f"times.{name}"[:80], problem)
        _, problem = check_seconds(value)
        if problem:
            errors.add(f"times.{name}"[:80], problem)
    errors.raise_if_any()


def _check_nodes_to_keep(n_node: Any, n_times: int) -> None:
    """Refuse a number of nodes to keep that is missing or not in 1..(nodes with times)."""
    if n_node is None:
        raise ValidationError({"n_node": ["is required with times"]})
    if isinstance(n_node, bool) or not isinstance(n_node, int) or not 1 <= n_node <= n_times:
        raise ValidationError({"n_node": [f"must be an integer in 1..{n_times} "
                                          "(the number of nodes with times)"]})


def job_benchmarks(job: Job) -> list[str]:
    """The benchmarks the job has stored results for (what select-fastest can use)."""
    return sorted(set(job.benchmark_results.values_list("benchmark", flat=True)))


def job_times(job: Job, benchmark: str) -> list[tuple[str, float]]:
    """(hostname, seconds) of the job's stored results of one benchmark, fastest first."""
    return list(job.benchmark_results.filter(benchmark=benchmark)
                .order_by("seconds", "node__index").values_list("node__hostname", "seconds"))


def _job_hostlist(job: Job, hostlist: str, field: str) -> list[str]:
    """A hostlist about ``job``, capped by its machine's node count."""
    try:
        return hostlists.expand(hostlist, max_nodes=job.machine.node_count)
    except hostlists.HostlistError as exc:
        raise ValidationError({field: [str(exc)]}) from exc


@transaction.atomic
def record_selection(job: Job, keep: str, dropped: str,
                     allow_fewer: bool = False) -> dict[str, int]:
    """Mark the job's active allocations: kept nodes primary, dropped nodes excluded.

    Refused, with nothing written, when a named node is not the job's, a kept node is
    drained or down, or the job would be left with fewer primary nodes than its node
    count and ``allow_fewer`` (the operator's say-so) is not given. Answers the job's
    primary and excluded counts after the change."""
    kept_names = set(_job_hostlist(job, keep, "keep"))
    dropped_names = set(_job_hostlist(job, dropped, "dropped"))
    active = list(Allocation.objects.select_for_update().filter(
        job=job, released_at__isnull=True).select_related("node").order_by("rank"))
    if not active:
        raise ValidationError({"job": [f"job {job.pk} holds no nodes now ({job.status}); "
                                       "there is nothing to record"]})
    _check_selection_nodes(job, active, kept_names, dropped_names)
    roles = {a.pk: (AllocationRole.PRIMARY if a.node.hostname in kept_names else
                    AllocationRole.EXCLUDED if a.node.hostname in dropped_names else a.role)
             for a in active}
    primary = sum(1 for role in roles.values() if role == AllocationRole.PRIMARY)
    if primary < job.node_count and not allow_fewer:
        raise ValidationError({"allow_fewer": [
            f"recording would leave job {job.pk} with {pluralize(primary, 'primary node')} "
            f"of the {job.node_count} it needs; confirm (allow_fewer) to record it anyway"]})
    for allocation in active:
        if allocation.role != roles[allocation.pk]:
            allocation.role = roles[allocation.pk]
            allocation.save(update_fields=["role"])
    return {"primary": primary,
            "excluded": sum(1 for role in roles.values() if role == AllocationRole.EXCLUDED)}


def _check_selection_nodes(job: Job, active: list[Allocation], kept: set[str],
                           dropped: set[str]) -> None:
    """Refuse kept or dropped nodes the job does not hold, and kept nodes not up."""
    held = {a.node.hostname: a.node.state for a in active}
    errors: dict[str, list[str]] = {}
    for field, names in (("keep", kept), ("dropped", dropped)):
        outside = sorted(names - set(held))
        if outside:
            errors[field] = [f"{hostlists.compress(outside)} "
                             f"{'is' if len(outside) == 1 else 'are'} not held by job {job.pk}"]
    bad = sorted(name for name in kept & set(held) if held[name] != NodeState.UP)
    if bad:
        errors.setdefault("keep", []).append(
            f"{hostlists.compress(bad)} {'is' if len(bad) == 1 else 'are'} drained or down; "
            "such a node is never kept")
    if errors:
        raise ValidationError(errors)
