"""Entry point: build the tables, run the compiled loop in chunks, summarise."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from allocation.hyperx.patterns import OPEN_LOOP_PATTERNS

from . import loop as L
from .checkpoint import CheckpointHook, RunState, Suspended, capture, fingerprint, restore
from .config import SimConfig
from .memory import (
    MemoryEstimate,
    check_growth,
    estimate_memory,
    initial_pool_packets,
    pool_reservation,
)
from .network import Network, build_network
from .results import AppResult, SimResult
from .rng import new_state
from .routing import N_FIELDS, ROUTING_CODES, vc_classes
from .scenarios import build_apps, build_partitions
from .traffic import AppSpec, TrafficTables, build_traffic

__all__ = ["simulate"]

_HIST_BINS = 1 << 17
_CHUNK_WORK = 20_000_000  # (port VCs + endpoints) x cycles per chunk


def simulate(
    config: SimConfig,
    partitions: list[np.ndarray] | None = None,
    progress: Callable[[float], None] | None = None,
    memory_limit: int | None = None,
    *,
    checkpoint: CheckpointHook | None = None,
    resume: RunState | None = None,
) -> SimResult:
    """Run one packet-level simulation.

    Parameters
    ----------
    config : SimConfig
        What to simulate.
    partitions : list of ndarray, optional
        Endpoint ids in rank order, one array per application.  ``None``
        builds them with :func:`simulation.engine.scenarios.build_partitions`
        (needs ``allocation.hyperx``).
    progress : callable, optional
        Called with the fraction done (0..1) every chunk of cycles.
    memory_limit : int, optional
        Bytes the run may take by :func:`~simulation.engine.memory.estimate_memory`:
        the packet pool reserves no more records than fit beside the run's other
        arrays, and a run whose packets in flight fill them stops with
        :class:`~simulation.engine.memory.MemoryLimitReached` (the caller checks
        the floor before, :func:`~simulation.engine.memory.check_memory`).
    checkpoint : callable, optional
        ``checkpoint(cycle, capture) -> stop``, called after every chunk of cycles
        (:mod:`~simulation.engine.checkpoint`): the caller saves ``capture()`` when
        it sees fit, and returning True stops the run with
        :class:`~simulation.engine.checkpoint.Suspended`.
    resume : RunState, optional
        A state this run saved before: the run continues from its cycle, and ends
        exactly as it would have without the stop.
        :class:`~simulation.engine.checkpoint.CheckpointMismatch` (a ``ValueError``)
        when it is another run's.

    Returns
    -------
    SimResult

    Examples
    --------
    >>> cfg = SimConfig(sides=(2, 2), concentration=2, ranks=8, pattern="all2all",
    ...                 routing="dor", message_packets=1, max_cycles=5000)
    >>> res = simulate(cfg, [np.arange(8)])
    >>> res.completed, res.packets_delivered == res.packets_injected == 56
    (True, True)
    """
    net = build_network(config.sides, config.concentration)
    if partitions is None:
        partitions = build_partitions(config)
    apps = build_apps(config, partitions)
    run_fingerprint = fingerprint(config, [np.asarray(p) for p in partitions])
    return _run(config, net, apps, progress, memory_limit,
                _Continuity(run_fingerprint, checkpoint, resume))


class _Continuity:
    """The run's checkpoint hook and the state it resumes from, if any."""

    def __init__(self, run_fingerprint: str, hook: CheckpointHook | None,
                 resume: RunState | None) -> None:
        self.fingerprint, self.hook, self.resume = run_fingerprint, hook, resume

    def bind(self, pool: dict, state: dict, ranks: dict) -> Callable[[int], bool]:
        """The hook as the chunk loop calls it: with the cycle alone."""
        def at_chunk_end(cycle: int) -> bool:
            return self.hook(cycle, lambda: capture(cycle, self.fingerprint, pool, state, ranks))
        return at_chunk_end


def _run(
    config: SimConfig,
    net: Network,
    apps: list[AppSpec],
    progress: Callable[[float], None] | None,
    memory_limit: int | None = None,
    continuity: _Continuity | None = None,
) -> SimResult:
    """Build the loop's tables, run it chunk by chunk, check and summarise."""
    tr = build_traffic(apps, config.packet_phits, config.concentration, config.seed,
                       all2all_rounds=config.all2all_schedule == "rounds",
                       stencil_wrap=config.stencil_wrap)
    vt = config.vcs * (max(a.vc_set for a in apps) + 1)
    n_fin = int(np.count_nonzero(tr.app_total > 0))
    meas = config.warmup_cycles if n_fin == 0 else 0
    prm = _routing_params(config, net, vt)
    cf = _cycle_params(config, net, vt, meas, n_fin)
    estimate = estimate_memory(config)
    pool = _packet_pool(config, net, len(tr.rank_ep), pool_reservation(estimate, memory_limit))
    state = _network_state(config, net, vt, tr.rank_ep)
    ranks = _rank_state(tr, len(apps))
    start, hook = 0, None
    if continuity is not None:
        if continuity.resume is not None:
            start = restore(continuity.resume, continuity.fingerprint, pool, state, ranks)
        if continuity.hook is not None:
            hook = continuity.bind(pool, state, ranks)
    t = _run_chunks(config, net, tr, prm, cf, pool, state, ranks, progress,
                    lambda cycle: _grow(pool, estimate, cycle, memory_limit), start, hook)
    _check_conservation(pool["st"], pool["pk"].shape[0], state)
    _check_port_occupancy(net, vt, config.input_buffer_packets, state)
    if progress is not None:
        progress(1.0)
    return _summarise(config, net, apps, pool["st"], t, meas, ranks["app_stats"],
                      ranks["app_done"], ranks["lat_hist"], state)


def _routing_params(config: SimConfig, net: Network, vt: int) -> np.ndarray:
    """The loop's routing parameter array ``prm`` (``loop.PRM_*`` and the first ten)."""
    prm = np.zeros(L.PRM_SIDES + config.dims, np.int64)
    prm[:10] = [
        config.concentration,
        net.ports_per_switch,
        net.net_ports,
        config.dims,
        config.vcs,
        vt,
        config.output_buffer_packets,
        ROUTING_CODES[config.routing],
        vc_classes(config.routing, config.dims),
        config.packet_phits,
    ]
    prm[L.PRM_OCCUPANCY] = 1 if config.occupancy == "port_vc" else 0
    prm[L.PRM_CHOICE] = 1 if config.port_choice == "fallback" else 0
    prm[L.PRM_XBAR] = 1 if config.crossbar == "vc" else 0
    prm[L.PRM_SIDES:] = net.sides
    return prm


def _cycle_params(config: SimConfig, net: Network, vt: int, meas: int, n_fin: int) -> np.ndarray:
    """The loop's timing and size parameter array ``cf`` (``loop.C_*``)."""
    phits = config.packet_phits
    cf = np.zeros(L.N_CF, np.int64)
    cf[L.C_P], cf[L.C_L], cf[L.C_R] = phits, config.link_latency, config.router_latency
    cf[L.C_XB] = -(-phits // config.speedup)  # cycles for a packet to cross the crossbar
    cf[L.C_BIN], cf[L.C_BSRC] = config.input_buffer_packets, config.source_queue_packets
    cf[L.C_ALLOC] = 1 if config.allocator == "round_robin" else 0
    cf[L.C_S], cf[L.C_E], cf[L.C_MEAS], cf[L.C_NFIN] = net.switches, net.endpoints, meas, n_fin
    cf[L.C_NPORTS] = net.ports
    cf[L.C_PREFETCH] = 1 if net.ports * vt >= L.PREFETCH_MIN_VCS else 0
    return cf


def _packet_pool(config: SimConfig, net: Network, n_ranks: int, reserve: int = 0) -> dict:
    """Packet records, their free stack, the loop's counters and its generator.

    The records and the stack are reserved at ``reserve`` records up front and the
    loop is given their first ``initial_pool_packets`` rows (``pk``,
    ``free_stack``), which ``_grow`` widens in place: numpy's zeroed arrays leave
    untouched pages unmapped, and the stack hands out the lowest free record
    first, so the reservation costs only the records the run has held at once,
    and growing copies nothing. A reservation the host refuses falls back to the
    first size (then growing copies).
    """
    npool = initial_pool_packets(n_ranks, net.endpoints)
    st = np.zeros(L.N_ST, np.int64)
    st[L.S_FREE] = npool
    try:
        records = np.zeros((max(reserve, npool), N_FIELDS), np.int32)
        stack = np.zeros(max(reserve, npool), np.int32)
    except MemoryError:
        records, stack = np.zeros((npool, N_FIELDS), np.int32), np.zeros(npool, np.int32)
    stack[:npool] = np.arange(npool - 1, -1, -1, dtype=np.int32)
    return dict(
        records=records, stack=stack, pk=records[:npool], free_stack=stack[:npool], st=st,
        rng=new_state(np.random.SeedSequence([config.seed, 0x51]).generate_state(1)[0]),
    )


def _network_state(config: SimConfig, net: Network, vt: int, rank_ep: np.ndarray) -> dict:
    """Buffers, counters and event queues of every port, switch and endpoint."""
    i32, i64 = np.int32, np.int64
    n_ports, n_ep, nvc = net.ports, net.endpoints, net.ports * vt
    # crossbar ports held per port, or per VC (``crossbar: vc``): then every VC of
    # a port may finish a crossing in the same cycle
    n_xb = nvc if config.crossbar == "vc" else n_ports
    phits, lat = config.packet_phits, config.link_latency

    def z(n: int, dt: type = i32) -> np.ndarray:
        return np.zeros(n, dt)

    return dict(
        in_q=np.zeros((nvc, config.input_buffer_packets), i32),
        credits=np.full(nvc, config.input_buffer_packets, i32),
        xin_busy=z(n_xb, i64),
        head=np.full((nvc, L.N_H), -1, i64),
        hq=_queue_table(nvc),
        ip=_input_port_table(n_ports),
        out_q=np.zeros((nvc, config.output_buffer_packets), i32),
        oq=_queue_table(nvc),
        out_port_n=z(n_ports),
        out_used=z(nvc),
        xout_busy=z(n_xb, i64),
        link_busy=z(n_ports, i64),
        out_rr=z(n_ports),
        link_phits=z(n_ports, i64),
        port_stamp=z(n_ports, i64),
        link_wake=np.full(n_ports, L.NEVER, i64),
        swst=_switch_table(net.switches),
        # per output port: sum over its VCs of out_used + (bin_cap - credits)
        port_occ=z(n_ports),
        memo=_candidate_memo(config, nvc),
        src_q=np.zeros((n_ep, config.source_queue_packets), i32),
        src_h=z(n_ep),
        src_n=z(n_ep),
        src_bits=z((n_ep + 63) // 64, i64),  # endpoints with a queued packet
        inj_busy=z(n_ep, i64),
        ep_rank=_endpoint_ranks(rank_ep, n_ep),
        cwheel=np.zeros((phits + lat + 2, n_xb), i32),
        cwheel_n=z(phits + lat + 2),
        sfifo=np.zeros((n_ports * 2 + 16, 2), i64),
        dfifo=np.zeros((n_ep * (lat // phits + 3), 2), i64),
        # the loop's scratch: a switch's input ports and a port's VCs in visiting order
        visit=np.empty(net.ports_per_switch, i64),
        vorder=np.empty(vt, i64),
    )


def _candidate_memo(config: SimConfig, nvc: int) -> np.ndarray:
    """The loop's memo of candidate ports (``loop.M_*``; see ``loop._port_choice``),
    kept under Omni-WAR only, whose heads recompute the same ports many times
    (a MIN head has one candidate per dimension: one row, which disables it)."""
    memo = np.zeros((nvc if config.routing == "omniwar" else 1, L.N_M), np.int64)
    memo[:, L.M_STAMP] = -1
    return memo


def _rank_state(tr: TrafficTables, n_apps: int) -> dict:
    """Per-application statistics and the per-rank progress and generation schedule."""
    i64 = np.int64
    n_ranks = len(tr.rank_ep)
    return dict(
        app_stats=np.zeros((n_apps, 8), i64),
        app_done=np.full(n_apps, -1, i64),
        lat_hist=np.zeros(_HIST_BINS, i64),
        recv=np.zeros(len(tr.expect), i64),
        rank_left=tr.rank_left.copy(),
        rank_m=tr.rank_m.copy(),
        rank_mleft=tr.rank_mleft.copy(),
        rank_dt=np.zeros(n_ranks, i64),
        gen_t=np.full(n_ranks, -1, i64),
        gw_head=np.full(L.GEN_WHEEL, -1, i64),
        gw_next=np.full(n_ranks, -1, i64),
        act=np.zeros(n_ranks, i64),
        in_act=np.zeros(n_ranks, np.int8),
        vis=np.zeros(n_ranks, i64),
        rank_made=np.full(n_ranks, -1, i64),
    )


def _run_chunks(
    config: SimConfig,
    net: Network,
    tr: TrafficTables,
    prm: np.ndarray,
    cf: np.ndarray,
    pool: dict,
    state: dict,
    ranks: dict,
    progress: Callable[[float], None] | None,
    grow: Callable[[int], None],
    start: int = 0,
    hook: Callable[[int], bool] | None = None,
) -> int:
    """Call the loop chunk by chunk from cycle ``start`` until ``max_cycles`` or
    completion; the last cycle.

    Chunks bound the time between progress reports; ``grow(cycle)`` widens the
    packet pool whenever the loop asks for it; ``hook(cycle)`` (the checkpoint) runs
    after every chunk that reached its end, and stops the run when it says so.
    """
    finite = tr.app_total > 0  # the background's deliveries never end: not work done
    total_work = int(tr.app_total[finite].sum())
    chunk = max(16, min(2048, _CHUNK_WORK // (len(state["hq"]) + net.endpoints)))
    app_stats = ranks["app_stats"]
    t = start
    while t < config.max_cycles:
        t1 = min(config.max_cycles, t + chunk)
        status = _call_loop(t, t1, cf, prm, net, tr, pool, state, ranks)
        t = int(pool["st"][L.S_CYCLE])
        if status == L.STATUS_ERROR:
            raise RuntimeError(f"internal event queue overflow at cycle {t}")
        if status == L.STATUS_GROW:
            grow(t)
            continue
        if progress is not None:
            frac = t / config.max_cycles
            if total_work:
                frac = max(frac, float(app_stats[finite, 2].sum()) / total_work)
            progress(min(1.0, frac))
        if status == L.STATUS_DONE:
            break
        if hook is not None and t < config.max_cycles and hook(t):
            raise Suspended(t)
    return t


def _call_loop(
    t: int, t1: int, cf: np.ndarray, prm: np.ndarray, net: Network, tr: TrafficTables,
    pool: dict, state: dict, ranks: dict,
) -> int:  # fmt: skip
    """One call of :func:`loop.run_cycles` from ``t`` to at most ``t1``; its status."""
    s, r = state, ranks
    return L.run_cycles(
        t, t1, cf, prm, pool["st"], pool["rng"],
        net.coords, net.dim_base, net.out_down_in, net.in_up_out,
        pool["pk"], pool["free_stack"],
        s["in_q"],
        s["credits"], s["xin_busy"], s["head"], s["hq"], s["ip"],
        s["out_q"], s["oq"], s["out_port_n"],
        s["out_used"], s["xout_busy"], s["link_busy"],
        s["out_rr"], s["link_phits"], s["port_stamp"], s["link_wake"],
        s["swst"], s["port_occ"], s["memo"],
        s["src_q"], s["src_h"], s["src_n"], s["src_bits"], s["inj_busy"], s["ep_rank"],
        s["cwheel"], s["cwheel_n"], s["sfifo"], s["dfifo"],
        tr.app_kind, tr.app_prob, tr.app_rank0, tr.app_nranks, tr.app_vcset,
        tr.app_total, tr.app_wait, tr.app_msize, r["app_stats"], r["app_done"], r["lat_hist"],
        tr.rank_ep, tr.rank_app, tr.rank_partner, r["rank_left"], r["rank_m"], r["rank_mleft"],
        r["rank_dt"], tr.rank_msg_ptr, tr.msg_dst, tr.msg_size, tr.msg_step,
        tr.rank_recv_ptr, r["recv"], tr.expect,
        r["gen_t"], r["gw_head"], r["gw_next"], r["act"], r["in_act"],
        r["vis"], r["rank_made"], s["visit"], s["vorder"],
    )  # fmt: skip


def _queue_table(nvc: int) -> np.ndarray:
    """Per-VC queue heads and counts (``loop.Q_*`` for input VCs, ``loop.O_*`` for
    output VCs: the same layout), every VC empty; int32, 16 bytes, so that a port's
    4 VCs span one 64-byte cache line, or two where numpy's 16-byte alignment splits
    them (aligning the table to 64 bytes measured no gain: 1.00x on ``ref``, 0.97x
    on ``big``)."""
    q = np.zeros((nvc, L.N_Q), np.int32)
    q[:, L.Q_PKT] = -1
    q[:, L.Q_RDY] = -1
    return q


def _input_port_table(n_ports: int) -> np.ndarray:
    """Per-input-port bookkeeping of the crossbar stage (``loop.IP_*`` columns)."""
    ip = np.zeros((n_ports, L.N_IP), np.int64)
    ip[:, L.IP_WAKE] = L.NEVER
    return ip


def _switch_table(n_sw: int) -> np.ndarray:
    """Per-switch bookkeeping of the event-driven loop (``loop.SW_*`` columns)."""
    swst = np.zeros((n_sw, L.N_SW), np.int64)
    swst[:, L.SW_WAKE] = L.NEVER
    swst[:, L.SW_LINK] = L.NEVER
    return swst


def _endpoint_ranks(rank_ep: np.ndarray, n_ep: int) -> np.ndarray:
    """Rank sending from each endpoint, -1 for idle endpoints."""
    ep_rank = np.full(n_ep, -1, np.int64)
    ep_rank[rank_ep] = np.arange(len(rank_ep))
    return ep_rank


def _grow(pool: dict, estimate: MemoryEstimate, cycle: int, limit: int | None) -> None:
    """Double the pool the loop sees, within its reservation (nothing is copied);
    past it, reserve twice as much and copy, if ``limit`` leaves room for both
    copies (else :class:`~simulation.engine.memory.MemoryLimitReached`)."""
    n, st = pool["pk"].shape[0], pool["st"]
    if n == pool["records"].shape[0]:
        check_growth(estimate, n, int(st[L.S_IN_NET]), cycle, limit)
        for key in ("records", "stack"):
            wider = np.zeros((2 * n, *pool[key].shape[1:]), pool[key].dtype)
            wider[:n] = pool[key][:n]
            pool[key] = wider
    wide = min(2 * n, pool["records"].shape[0])
    top = int(st[L.S_FREE])
    pool["stack"][top : top + wide - n] = np.arange(wide - 1, n - 1, -1)
    st[L.S_FREE] = top + wide - n
    pool["pk"], pool["free_stack"] = pool["records"][:wide], pool["stack"][:wide]


def _check_conservation(st: np.ndarray, npool: int, state: dict) -> None:
    injected = int(st[L.S_INJECTED])
    delivered = int(st[L.S_DELIVERED])
    in_net = int(st[L.S_IN_NET])
    queued = (
        int(state["hq"][:, L.Q_N].sum())
        + int(state["oq"][:, L.O_N].sum())
        + int(state["src_n"].sum())
        + int(st[L.S_DF_N])
    )
    if injected != delivered + in_net or in_net != queued or npool - st[L.S_FREE] != in_net:
        raise RuntimeError(
            f"packet conservation violated: injected={injected} delivered={delivered} "
            f"in_network={in_net} queued={queued} pool_used={npool - int(st[L.S_FREE])}"
        )


def _check_port_occupancy(net: Network, vt: int, bin_cap: int, state: dict) -> None:
    """The loop's incremental per-port occupancy counters against a recount."""
    occ = state["out_used"].reshape(-1, vt).sum(axis=1, dtype=np.int64)
    down = net.out_down_in
    net_ports = down >= 0
    cr = state["credits"].reshape(-1, vt).sum(axis=1, dtype=np.int64)
    occ[net_ports] += vt * bin_cap - cr[down[net_ports]]
    if not np.array_equal(occ, state["port_occ"]):
        raise RuntimeError("per-port occupancy counters out of step with the VC counters")


def _summarise(
    config: SimConfig,
    net: Network,
    apps: list[AppSpec],
    st: np.ndarray,
    t: int,
    meas: int,
    app_stats: np.ndarray,
    app_done: np.ndarray,
    lat_hist: np.ndarray,
    state: dict,
) -> SimResult:
    phits = config.packet_phits
    window = max(1, t - meas)
    app_results = []
    for a, spec in enumerate(apps):
        k = len(spec.endpoints)
        finite = _is_finite(spec)
        n_lat = int(app_stats[a, 5])
        app_results.append(
            AppResult(
                policy=spec.policy,
                role=spec.role,
                pattern=spec.pattern,
                partition=tuple(int(x) for x in spec.endpoints),
                completion_cycles=int(app_done[a]) if finite and app_done[a] >= 0 else None,
                packets=int(app_stats[a, 2]),
                packets_injected=int(app_stats[a, 1]),
                offered=float(app_stats[a, 0]) * phits / (window * k),
                throughput=float(app_stats[a, 3]) * phits / (window * k),
                latency_mean=float(app_stats[a, 4]) / n_lat if n_lat else None,
                latency_max=int(app_stats[a, 6]) if n_lat else None,
            )
        )
    main = [i for i, s in enumerate(apps) if s.role == "app"]
    k_all = sum(len(apps[i].endpoints) for i in main)
    n_lat = int(app_stats[main, 5].sum())
    finite_apps = [r for r, s in zip(app_results, apps, strict=True) if _is_finite(s)]
    completed = all(r.completion_cycles is not None for r in finite_apps)
    makespan = (
        max(r.completion_cycles for r in finite_apps) if finite_apps and completed else None
    )
    p99 = None
    if lat_hist.sum() > 0:
        cum = np.cumsum(lat_hist)
        p99 = float(np.searchsorted(cum, 0.99 * cum[-1]))
    ports = np.nonzero(net.out_down_in >= 0)[0]
    sw = ports // net.ports_per_switch
    util = state["link_phits"][ports] / window
    links = tuple(
        (int(a), int(b), float(u))
        for a, b, u in zip(sw, net.port_dst_switch[ports], util, strict=True)
    )
    return SimResult(
        config=config.to_dict(),
        cycles=int(t),
        completed=bool(completed),
        makespan_cycles=None if makespan is None else int(makespan),
        measure_from=int(meas),
        throughput=float(app_stats[main, 3].sum()) * phits / (window * k_all),
        offered=float(app_stats[main, 0].sum()) * phits / (window * k_all),
        latency_mean=float(app_stats[main, 4].sum()) / n_lat if n_lat else None,
        latency_p99=p99,
        packets_injected=int(st[L.S_INJECTED]),
        packets_delivered=int(st[L.S_DELIVERED]),
        packets_dropped=int(st[L.S_DROPPED]),
        packets_in_flight=int(st[L.S_IN_NET]),
        phit_hops=int(st[L.S_PHIT_HOPS]),
        link_utilisation=links,
        apps=tuple(app_results),
    )


_OPEN = OPEN_LOOP_PATTERNS


def _is_finite(spec: AppSpec) -> bool:
    """An application (not background) with a finite amount of work."""
    return spec.role == "app" and (spec.packets_per_task is not None or spec.pattern not in _OPEN)
