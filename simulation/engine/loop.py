"""The compiled cycle loop.

One call of :func:`run_cycles` advances the whole network state (flat numpy
arrays, no Python object per packet) from cycle ``t0`` until ``t1``, until
every finite application has completed, or until the packet pool runs low.
The caller (:mod:`simulation.engine.simulator`) loops over chunks, grows the
pool when asked and reports progress.

Timing model (virtual cut-through, per cycle ``t``, in this order):

0. *Events*: a credit comes back to the upstream port ``link_latency``
   cycles after a packet's tail left an input buffer through the crossbar;
   an output buffer slot is freed ``P`` cycles after its packet started on
   the link (the tail has left); packets are delivered when their tail
   reaches the endpoint (``link_latency + P`` cycles after the ejection
   link started sending).
1. *Generation*: open-loop sources draw a Bernoulli(rate / P) packet;
   closed-loop ranks create the next packet of their current message when
   its dependencies (deliveries up to this cycle) are met.  At most one
   packet per rank and cycle enters the bounded source queue.
2. *Links*: every idle output link starts sending the head packet of one of
   its output VCs (round-robin, or in a uniformly random order of the VCs)
   whose downstream input VC
   has a credit (a full packet of space: VCT).  The link is busy ``P``
   cycles; the head reaches the downstream input buffer ``link_latency``
   cycles later.
3. *Crossbar*: separable allocation, switch by switch: each idle input port
   offers the head packet of one VC whose head has arrived; the routing
   function picks an output port and VC that can take it now.  Input and
   output crossbar ports are then busy until the tail has crossed (with
   ``crossbar: vc``, the study's simulator's granularity, the input VC and
   the output VC instead of their ports, so that every VC of a port may
   cross in the same cycle):
   ``ceil(P / speedup)`` cycles, but not before the tail has arrived (head
   arrival + ``P``): the crossbar cannot outrun a packet still streaming
   in, so speedup only helps packets already buffered.  The packet may
   leave on its output link ``router_latency`` cycles after the grant
   (cut-through).
4. *Injection*: each endpoint whose injection link is idle sends the head of
   its source queue to an input VC of its switch that has a credit.

Zero-load latency over ``h`` switch hops is therefore
``(h + 1) * (router_latency + link_latency) + link_latency + P``.

Work follows events, not ports x cycles: a link, an input port or a
switch is looked at only from the cycle at which something may happen there
(a head arrives, a crossbar port or link frees, a credit returns, a packet
is granted), or when an output port that one of its blocked heads may go to
changes (per-port change stamps, see :func:`route`); open-loop arrivals are
geometric gaps on a timing wheel and closed-loop ranks are kept in an active
list.  What is skipped would have failed whatever the random draws, so runs
follow the same law as a full sweep (a seed gives another sample of it);
runs that draw no random number are bit-identical to a full sweep.

All numba code of the engine lives in this one module on purpose: numba's
on-disk cache (``cache=True``) is invalidated only when the file defining
the cached function changes, not when a function it calls in another module
does.  The generator (:mod:`.rng`) and routing (:mod:`.routing`) modules
document and re-export their parts.
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

__all__ = [
    "K_ALL2ALL_ROUNDS",
    "PRM_CHOICE",
    "PRM_OCCUPANCY",
    "PRM_SIDES",
    "PRM_XBAR",
    "STATUS_DONE",
    "STATUS_ERROR",
    "STATUS_GROW",
    "STATUS_LIMIT",
    "best_vc",
    "rand_float",
    "rand_int",
    "route",
    "run_cycles",
]

STATUS_LIMIT = 0  # reached t1
STATUS_DONE = 1  # every finite application completed
STATUS_GROW = 2  # packet pool too small: grow and call again
STATUS_ERROR = 3  # internal FIFO overflow (a bug)

# ------------------------------------------------------------- generator
# xorshift64* (state: one-element uint64 array owned by the simulation)
_MUL = np.uint64(2685821657736338717)
_S12 = np.uint64(12)
_S25 = np.uint64(25)
_S27 = np.uint64(27)
_S11 = np.uint64(11)
_S32 = np.uint64(32)
_INV53 = 1.0 / 9007199254740992.0


@njit(cache=True, inline="always")
def rand_u64(state):
    """Next 64-bit output."""
    x = state[0]
    x ^= x >> _S12
    x ^= x << _S25
    x ^= x >> _S27
    state[0] = x
    return x * _MUL


@njit(cache=True, inline="always")
def rand_float(state):
    """Uniform float in [0, 1)."""
    return np.float64(rand_u64(state) >> _S11) * _INV53


@njit(cache=True, inline="always")
def rand_int(state, n):
    """Uniform integer in [0, n) for 0 < n < 2**31.

    The high 32 bits scaled by ``n`` (multiply and shift, no division: the
    cycle loop draws one per visited switch and port); the bias is below
    ``n / 2**32``.
    """
    return np.int64(((rand_u64(state) >> _S32) * np.uint64(n)) >> _S32)


# --------------------------------------------------------------- routing
DEROUTE_PENALTY = 64
ROUTING_CODES = {"dor": 0, "min": 1, "valiant": 2, "omniwar": 3}
ROUTING_OMNIWAR = ROUTING_CODES["omniwar"]

# packet record fields (columns of the int32 packet pool)
F_DST = 0
F_SRC = 1
F_GEN = 2
F_READY = 3
F_HOPS = 4
F_DER = 5
F_INTER = 6
F_APP = 7
F_VCSET = 8
F_STEP = 9
F_DRANK = 10
F_MEAS = 11
N_FIELDS = 12


@njit(cache=True, inline="always")
def best_vc(go, lo, hi, out_used, vt, bout):
    """VC in ``[lo, hi)`` of output port ``go`` with most free slots, or -1."""
    best = -1
    best_u = bout
    for v in range(lo, hi):
        u = out_used[go * vt + v]
        if u < best_u:
            best_u = u
            best = v
    return best


NEVER = np.int64(1) << 62  # a cycle that never comes
NO_COST = np.int64(1) << 62  # above every cost

# columns of the per-input-VC head record ``head`` (see :func:`route`)
H_EVT = 0  # event count at the head's last failed evaluation; -1: evaluate in full
H_WAKE = 1  # first cycle at which a time-triggered full evaluation is due
H_COST = 2  # best cost at that evaluation (MIN / Omni-WAR)
H_TIED = 3  # bit mask of the local ports tied at that cost, all unavailable then
H_WATCH = 4  # bit mask of the local ports whose change may turn the failure (-1: all)
# What a check call of a MIN / Omni-WAR head needs of its packet, kept from its
# failed full evaluation so that the check reads no packet record (a cache miss
# per blocked head at high load) and divides nothing; H_VCS = -1: none kept
H_VCS = 5  # its class's VCs: the first | one past the last << 32 (one column: a cache line)
H_MIN = 6  # bit mask of its minimal candidates (local ports)
H_FLOOR = 7  # at most the cost of every candidate outside H_TIED whose port has not changed
N_H = 8
VCS_SHIFT = np.int64(32)
VCS_LOW = np.int64(0xFFFFFFFF)

# columns of the per-input-VC queue-head record ``hq`` (int32): apart from
# ``head``, so that the crossbar's scan of a port's VCs and a grant or an
# arrival read one 16-byte record per VC (a port of 4 VCs: one cache line)
Q_PKT = 0  # the head packet (in_q[ivc, hq[ivc, Q_H]]) while the VC holds one
Q_RDY = 1  # its head's arrival cycle (pk[., F_READY]); -1: the VC is empty
Q_H = 2  # index of the head in the VC's ring buffer ``in_q[ivc]``
Q_N = 3  # packets in the VC
N_Q = 4

# columns of the per-input-port record ``ip``: what the crossbar stage reads of a
# port before its VCs, in one cache line
IP_N = 0  # packets in its input buffers (every VC)
IP_WAKE = 1  # first cycle at which one of its heads may be grantable without a change
IP_WATCH = 2  # union of its blocked heads' watch masks
IP_RR = 3  # round-robin pointer over its VCs
N_IP = 4

# columns of the per-output-VC queue record ``oq`` (int32): the same for output
# queues, so that the link and crossbar stages read one 16-byte record instead
# of the chain queue length -> queue head -> packet record for every VC they
# look at (a port of 4 VCs: one cache line). The layout is ``hq``'s, so that one
# helper (``_pop_head``) and one allocation serve both.
O_PKT = Q_PKT  # the head packet while the VC holds one
O_RDY = Q_RDY  # its ready cycle (it may leave on the link); -1: empty
O_H = Q_H  # index of the head in the VC's ring buffer ``out_q[ovc]``
O_N = Q_N  # packets in the VC
N_O = N_Q


@njit(cache=True, inline="always")
def _bit(lp, pt):
    """Bit of local port ``lp`` in a watch mask; every bit when ports exceed 64."""
    if pt > 64:
        return np.int64(-1)
    return np.int64(1) << lp


@intrinsic
def _ctz(typingctx, x):
    """Index of the lowest set bit of a non-zero int64 (``llvm.cttz``)."""
    sig = types.int64(types.int64)

    def codegen(context, builder, signature, args):
        fn = builder.module.declare_intrinsic("llvm.cttz", [ir.IntType(64), ir.IntType(1)])
        return builder.call(fn, [args[0], ir.Constant(ir.IntType(1), 0)])

    return sig, codegen


@intrinsic
def _prefetch(typingctx, arr, flat):
    """Ask the cache for the line of ``arr``'s element at flat index ``flat``
    (``llvm.prefetch``, read, keep in every level): a hint that never faults
    and changes no state, so a run stays bit-identical.

    Why: once a machine's state outgrows the cache (16x16x16: some 250 MiB),
    a visit walks a chain of dependent misses (port record -> VC queue heads
    -> packet record -> candidate ports), and the core waits on each link.
    The loop asks for the next port's records while it works on this one
    (the crossbar stage: every input port it will look at, the next port's
    VC records, the ready heads' packets; the link stage: the next due
    port's output queues and the input VCs they feed)."""
    if not isinstance(arr, types.Array):
        return None
    sig = types.void(arr, types.int64)

    def codegen(context, builder, signature, args):
        ary = context.make_array(signature.args[0])(context, builder, args[0])
        i8p = ir.IntType(8).as_pointer()
        i32 = ir.IntType(32)
        ptr = builder.bitcast(builder.gep(ary.data, [args[1]]), i8p)
        fnty = ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32])
        fn = builder.module.declare_intrinsic("llvm.prefetch", [i8p], fnty)
        builder.call(fn, [ptr, ir.Constant(i32, 0), ir.Constant(i32, 3), ir.Constant(i32, 1)])
        return context.get_dummy_value()

    return sig, codegen


@njit(cache=True, inline="always")
def _prefetch_port(g, vt, xb_vc, hq, head, xin_busy):
    """Prefetch what the crossbar stage reads of input port ``g``'s VCs."""
    _prefetch(hq, g * vt * N_Q)
    _prefetch(xin_busy, g * vt if xb_vc else g)
    for v in range(vt):
        _prefetch(head, (g * vt + v) * N_H)


@njit(cache=True, inline="always")
def _prefetch_packets(g, vt, t, hq, pk):
    """Prefetch the packet records of input port ``g``'s heads ready at ``t``."""
    for v in range(vt):
        rdy = hq[g * vt + v, Q_RDY]
        if 0 <= rdy <= t:
            _prefetch(pk, hq[g * vt + v, Q_PKT] * N_FIELDS)


@njit(cache=True, inline="always")
def _xo(go, v, vt, xb_vc):
    """Index of the crossbar busy-until cycle of output VC ``(go, v)``: its
    own with a per-VC crossbar, its port's otherwise."""
    return go * vt + v if xb_vc else go


@njit(cache=True, inline="always")
def _busy_wake(go, lo, hi, out_used, xout_busy, vt, bout, xb_vc):
    """Cycle at which busy output ``go`` may take a packet of VCs ``[lo, hi)``
    without any change of state: when its crossbar port (per-VC crossbar: the
    first of those VCs with room) frees, if a VC has room, else never (a
    change of occupancy must come first)."""
    if not xb_vc:
        if best_vc(go, lo, hi, out_used, vt, bout) < 0:
            return NEVER
        return xout_busy[go]
    w = NEVER
    for v in range(lo, hi):
        if out_used[go * vt + v] < bout:
            w = min(w, xout_busy[go * vt + v])
    return w


@njit(cache=True, inline="always")
def _free_vc(go, lo, hi, out_used, xout_busy, vt, bout, t):
    """Per-VC crossbar: the VC in ``[lo, hi)`` of output ``go`` with most free
    slots among those with room that are not being fed, or -1."""
    best = -1
    best_u = bout
    for v in range(lo, hi):
        u = out_used[go * vt + v]
        if u < best_u and xout_busy[go * vt + v] <= t:
            best_u = u
            best = v
    return best


@njit(cache=True, inline="always")
def _cand_wake(go, v, t, out_used, xout_busy, vt, bout, xb_vc):
    """``t`` if candidate ``(go, v)`` can take a packet now, else the cycle its
    crossbar port (or VC) frees if VC ``v`` has room, else never."""
    if out_used[go * vt + v] >= bout:
        return NEVER
    x = xout_busy[_xo(go, v, vt, xb_vc)]
    if x > t:
        return x
    return t


@njit(cache=True, inline="always")
def _occupancy(go, v, out_used, credits, out_down_in, bin_cap, port_occ, vt, port_vc):
    """What a candidate's cost counts of VC ``v`` of output port ``go``: its
    output slots in use and the downstream input slots not yet credited back,
    plus the whole port's (every VC) under ``port_vc``, as the study's router adds."""
    occ = np.int64(out_used[go * vt + v] + bin_cap - credits[out_down_in[go] * vt + v])
    if port_vc:
        occ += port_occ[go]
    return occ


@njit(cache=True, inline="always")
def _wake_at(xw, go, v, t, out_used, xout_busy, vt, bout, xb_vc):
    """:func:`_cand_wake` from a known busy-until cycle ``xw`` (never if the VC
    is full; from the memo, or ``t`` on the fallback path, which checked it),
    or read afresh where ``xw`` is -1."""
    if xw < 0:
        return _cand_wake(go, v, t, out_used, xout_busy, vt, bout, xb_vc)
    return xw if xw > t else t


# columns of the candidate memo ``memo`` (row ``go * vt + lo``: output port ``go``
# for the VC class starting at ``lo``; see :func:`_port_choice`)
M_STAMP = 0  # ``port_stamp[go]`` when the row was written; -1: never written
M_VHI = 1  # the VC chosen | the class's end ``hi`` << 16
M_OCC = 2  # that VC's occupancy (plus the port's, under ``PRM_OCCUPANCY``)
M_XW = 3  # its crossbar output's busy-until cycle, or NEVER if the VC is full
N_M = 4


@njit(cache=True, inline="always")
def _port_choice(go, lo, hi, out_used, xout_busy, vt, bout, xb_vc, out_down_in, credits,
                 bin_cap, port_occ, port_vc, port_stamp, memo):
    """``(vc, occupancy, busy_until)`` of candidate port ``go`` for the VCs
    ``[lo, hi)``: the VC with most free output slots (full ones compete too),
    its occupancy (its slots in use and the downstream input slots not yet
    credited back, plus the whole port's under ``port_vc``), and the cycle its
    crossbar output frees (never if that VC is full): the candidate can take
    a packet at ``t`` iff ``busy_until <= t``.

    Why a memo: they are functions of the port's state, which changes only
    where ``port_stamp[go]`` moves on, and under Omni-WAR interference a
    switch's blocked heads (up to 88 on an 8 x 8 machine) recompute the same
    few changed ports in every check and full evaluation.  A row is reused
    while the port's stamp is the one it was written at, so the values are
    the recomputed ones, bit for bit.  ``memo`` with one row disables it.
    """
    on = memo.shape[0] > 1
    k = go * vt + lo
    if on and memo[k, M_STAMP] == port_stamp[go] and (memo[k, M_VHI] >> 16) == hi:
        return memo[k, M_VHI] & 0xFFFF, memo[k, M_OCC], memo[k, M_XW]
    v = best_vc(go, lo, hi, out_used, vt, bout + 1)  # full VCs compete too
    occ = _occupancy(go, v, out_used, credits, out_down_in, bin_cap, port_occ, vt, port_vc)
    xw = NEVER if out_used[go * vt + v] >= bout else xout_busy[_xo(go, v, vt, xb_vc)]
    if on:
        memo[k, M_STAMP] = port_stamp[go]
        memo[k, M_VHI] = v | (hi << 16)
        memo[k, M_OCC] = occ
        memo[k, M_XW] = xw
    return v, occ, xw


@njit(cache=True, inline="always", error_model="numpy")
def _check_tied(sw, t, out_used, xout_busy, prm, out_down_in, credits, bin_cap, head, ivc,
                port_occ, cm, port_stamp, memo):
    """Check call of a MIN / Omni-WAR head on a switch of <= 64 ports (see :func:`route`).

    ``cm`` names the candidates to recompute: those whose port changed since
    the head's last evaluation and, for an Omni-WAR head whose ``H_WAKE`` is
    reached, the tied ones (a crossbar output may have freed).  The others kept their costs: the
    tied ones ``H_COST``, every other one at least ``H_FLOOR`` (a bound the
    last evaluation or check left: above ``H_COST``).  So the lowest cost is
    known whenever a recomputed or unchanged tied candidate costs less than
    ``H_FLOOR``, and then its tied set is the unchanged tied ports (at
    ``H_COST`` only) and the recomputed ones at that cost.
    If none of them can take the packet the failure is certain: the head
    records that cost, set, their first wake-up and the new bound (the least
    cost left out of the set), as a failed full evaluation would, and
    ``(-1, -1, 0)`` is returned.  Otherwise (one can, or an unchanged port
    may cost as little) ``(-2, -1, 0)``: evaluate in full.  The packet's
    class and minimal ports come from the head record; no draw is made.

    Why: a full Omni-WAR evaluation looks at every port of the dimensions it
    has left (14 on an 8 x 8 machine), and under interference most of the
    full evaluations that followed a check or a wake-up failed again (158 and
    61 a cycle of the 358 at the ``interf`` row of bench_simulation.py;
    benchmarks/count_loop_work.py).  Deciding those here changes no verdict,
    but skips the draws a failing full evaluation makes among candidates that
    can take the packet at a cost a later candidate undercuts, so Omni-WAR
    runs take other random streams (engine 2.3); runs whose failing
    evaluations never draw (MIN on two dimensions: at most two candidates)
    are unchanged.  Engine 2.4 added the bound: a check used to give up as
    soon as every tied port had become dearer (96 of the 133 full
    evaluations a check asked for at ``interf`` then failed), though the
    ports outside the tied set are dearer still, most by the deroute penalty.
    """
    pt = prm[1]
    vt = prm[5]
    bout = prm[6]
    phits = prm[9]
    xb_vc = prm[PRM_XBAR] == 1
    port_vc = prm[PRM_OCCUPANCY] == 1
    vcs = head[ivc, H_VCS]
    lo = vcs & VCS_LOW
    hi = vcs >> VCS_SHIFT
    minimal = head[ivc, H_MIN]
    floor = head[ivc, H_FLOOR]  # unchanged ports outside the tied set cost at least this
    memo_on = memo.shape[0] > 1
    keep = head[ivc, H_TIED] & ~cm  # unchanged tied ports: cost b_cost, still unavailable
    b_cost = head[ivc, H_COST]
    best = b_cost if keep != 0 else NO_COST
    best_set = keep
    new_floor = floor  # the record's floor afterwards: every port left out of the tied set
    wake = NEVER
    free = False
    m = cm
    g0 = sw * pt
    while m != 0:
        lp = _ctz(m)
        m &= m - 1
        go = g0 + lp
        if memo_on:
            v, occ, xw = _port_choice(go, lo, hi, out_used, xout_busy, vt, bout, xb_vc,
                                      out_down_in, credits, bin_cap, port_occ, port_vc,
                                      port_stamp, memo)
        else:
            v = best_vc(go, lo, hi, out_used, vt, bout + 1)  # full VCs compete too
            occ = _occupancy(go, v, out_used, credits, out_down_in, bin_cap, port_occ, vt,
                             port_vc)
            xw = np.int64(-1)  # read below, once it matters
        cost = occ * phits
        if (minimal >> lp) & 1 == 0:
            cost += DEROUTE_PENALTY
        if cost > best:
            new_floor = min(new_floor, cost)
            continue
        w = _wake_at(xw, go, v, t, out_used, xout_busy, vt, bout, xb_vc)
        if cost < best:
            new_floor = min(new_floor, best)  # the set so far leaves the tied set
            best = cost
            best_set = np.int64(1) << lp
            wake = w
            free = w <= t
        else:
            best_set |= np.int64(1) << lp
            wake = min(wake, w)
            free = free or w <= t
    if free or best >= floor:
        return -2, -1, 0  # may succeed, or an unchanged port may cost as little: in full
    head[ivc, H_COST] = best
    head[ivc, H_TIED] = best_set
    head[ivc, H_FLOOR] = new_floor
    if best == b_cost and head[ivc, H_WAKE] > t:  # never later than the recorded wake-up
        wake = min(wake, head[ivc, H_WAKE])
    head[ivc, H_WAKE] = wake
    return -1, -1, 0


@njit(cache=True, inline="always", error_model="numpy")
def route(
    sw, p, t, pk, coords, dim_base, out_used, xout_busy, rng, prm, out_down_in, credits, bin_cap,
    head, ivc, port_stamp, port_occ, cm, memo,
):  # fmt: skip
    """Choose ``(out_local_port, vc, deroute)`` for packet ``p`` at switch ``sw``.

    DOR and Valiant have one candidate port; MIN and Omni-WAR rank theirs by
    cost (occupancy of the emptiest VC of the class, in phits, plus the
    deroute penalty).  The choice is returned only if its crossbar output is
    free this cycle and its VC has a free slot, else ``(-1, -1, 0)`` and the
    packet retries later.

    *Sleeping heads.*  ``p`` is the head of input VC ``ivc``; ``head[ivc]``
    remembers its last failed evaluation so that the cycle loop need not
    repeat evaluations that are certain to fail again (most of them at high
    load).  A failure is certain while (1) no candidate output port has
    changed state (``port_stamp[go] <= head[ivc, H_EVT]``: the occupancy of
    its VCs and their downstream credits, the only state a candidate's cost
    and availability are read from; a grant also sets ``xout_busy``; ``cm``
    is the caller's mask of the candidate ports that changed), and
    (2) the cycle is before ``head[ivc, H_WAKE]``, the earliest cycle at
    which a tied best candidate's crossbar output frees (a failure means
    that every candidate at the lowest cost was busy or full: the random
    draw is among the tied candidates that can take the packet, as the
    authors' router applies lowest cost, then flow control, then a random
    choice).
    For MIN and Omni-WAR (wait) the tied best set is kept as a bit mask of
    local ports in ``head[ivc, H_TIED]`` with its cost ``head[ivc, H_COST]``:
    when some candidates changed, or (Omni-WAR) ``H_WAKE`` is reached, a
    *check* call (``head[ivc, H_EVT] >= 0``, see :func:`_check_tied`)
    recomputes only the changed candidates (and at ``H_WAKE`` the tied ones) and decides the
    evaluation itself when the lowest cost is known and nothing at it can
    take the packet; otherwise it returns ``(-2, -1, 0)`` and the caller
    evaluates in full (``head[ivc, H_EVT] = -1``).  A check call draws no
    random number; the verdict and the head's record are those of a full
    evaluation, and a full evaluation that fails decides nothing with its
    draws, so the packet's choices are distributed as if it had been
    evaluated every cycle.  This relies on
    a candidate's cost being a function of its own output port's state and
    the packet.  What the check needs of the packet (its VC class and its
    minimal ports) is kept in the head record (``H_LO``, ``H_HI``, ``H_MIN``)
    by the failed full evaluation, so on switches of <= 64 ports a check
    (:func:`_check_tied`) reads no packet record.  Only that failure sets
    ``H_LO``; the ejection and dimension-order paths, the only other ones a
    head of the same VC can fail in, reset it, so a record is never used for
    another packet.

    *Port occupancy.*  ``port_occ[go]`` is the sum over the VCs of output
    port ``go`` of ``out_used + bin_cap - credits`` (its output slots in use
    plus the downstream input slots not yet credited back), kept up to date
    by the cycle loop where either term changes (grant, output slot freed,
    link send, credit return): the ``port_vc`` cost reads one counter
    instead of summing ``vt`` pairs of VC counters per candidate.
    """
    c = prm[0]
    pt = prm[1]
    pn = prm[2]
    q = prm[3]
    v_set = prm[4]
    vt = prm[5]
    bout = prm[6]
    routing = prm[7]
    n_cls = prm[8]
    phits = prm[9]
    xb_vc = prm[PRM_XBAR] == 1
    evt = head[ivc, H_EVT]
    if evt >= 0 and head[ivc, H_VCS] >= 0:
        return _check_tied(sw, t, out_used, xout_busy, prm, out_down_in, credits, bin_cap, head,
                           ivc, port_occ, cm, port_stamp, memo)
    base = pk[p, F_VCSET] * v_set
    dst = pk[p, F_DST]
    dsw = dst // c
    target = dsw
    cls = 0
    if routing == 2:  # valiant
        inter = pk[p, F_INTER]
        if inter == sw:
            pk[p, F_INTER] = -1
            inter = -1
        if inter >= 0:
            target = inter
        else:
            cls = 1
    chk = evt >= 0  # check call: only changed candidates can turn the failure
    if target == sw:  # eject
        go = sw * pt + pn + dst % c
        if chk and port_stamp[go] <= evt:
            return -1, -1, 0
        head[ivc, H_WATCH] = _bit(pn + dst % c, pt)
        head[ivc, H_VCS] = -1  # its checks take the general path
        if xb_vc:
            v = _free_vc(go, base, base + v_set, out_used, xout_busy, vt, bout, t)
            if v < 0:
                head[ivc, H_WAKE] = _busy_wake(go, base, base + v_set, out_used, xout_busy, vt,
                                               bout, xb_vc)
                return -1, -1, 0
            return pn + dst % c, v, 0
        if xout_busy[go] > t:
            head[ivc, H_WAKE] = _busy_wake(go, base, base + v_set, out_used, xout_busy, vt, bout,
                                           xb_vc)
            return -1, -1, 0
        v = best_vc(go, base, base + v_set, out_used, vt, bout)
        if v < 0:
            head[ivc, H_WAKE] = NEVER
            return -1, -1, 0
        return pn + dst % c, v, 0
    if routing == 0 or routing == 2:  # dimension order
        if routing == 0:
            lo = base
            hi = base + v_set
        else:
            lo = base + cls * v_set // n_cls
            hi = base + (cls + 1) * v_set // n_cls
        for d in range(q):
            sd = coords[sw, d]
            td = coords[target, d]
            if sd != td:
                lp = dim_base[d] + (td if td < sd else td - 1)
                go = sw * pt + lp
                if chk and port_stamp[go] <= evt:
                    return -1, -1, 0
                head[ivc, H_WATCH] = _bit(lp, pt)
                head[ivc, H_VCS] = -1  # its checks take the general path
                if xb_vc:
                    v = _free_vc(go, lo, hi, out_used, xout_busy, vt, bout, t)
                    if v < 0:
                        head[ivc, H_WAKE] = _busy_wake(go, lo, hi, out_used, xout_busy, vt, bout,
                                                       xb_vc)
                        return -1, -1, 0
                    return lp, v, 0
                if xout_busy[go] > t:
                    head[ivc, H_WAKE] = _busy_wake(go, lo, hi, out_used, xout_busy, vt, bout,
                                                   xb_vc)
                    return -1, -1, 0
                v = best_vc(go, lo, hi, out_used, vt, bout)
                if v < 0:
                    head[ivc, H_WAKE] = NEVER
                    return -1, -1, 0
                return lp, v, 0
        return -1, -1, 0
    hop = pk[p, F_HOPS]
    if hop >= n_cls:
        hop = n_cls - 1
    lo = base + hop * v_set // n_cls
    hi = base + (hop + 1) * v_set // n_cls
    best_lp = -1
    best_v = -1
    best_cost = NO_COST
    floor = NO_COST  # the lowest cost outside the tied set (the check's bound, H_FLOOR)
    best_der = 0
    ties = 0
    allow_der = routing == 3 and pk[p, F_DER] < q
    port_vc = prm[PRM_OCCUPANCY] == 1
    fallback = prm[PRM_CHOICE] == 1
    # sleeping-head bookkeeping (see the docstring); masks need pn <= 64
    masks = pn <= 64
    memo_on = memo.shape[0] > 1
    tied = head[ivc, H_TIED]
    b_cost = head[ivc, H_COST]
    n_tied = 0
    changed = np.int64(0)
    new_tied = np.int64(0)
    wake = NEVER
    redo = False
    any_changed = False
    watch = np.int64(0)
    minimal = np.int64(0)  # the minimal candidate of every dimension left
    for d in range(q):
        sd = coords[sw, d]
        td = coords[target, d]
        if sd == td:
            continue
        if allow_der:
            first = 0
            last = prm[PRM_SIDES + d] - 1  # n_d - 1 ports in dimension d
        else:
            first = td if td < sd else td - 1
            last = first + 1
        tport = td if td < sd else td - 1
        minimal |= np.int64(1) << (dim_base[d] + tport)
        for o in range(first, last):
            lp = dim_base[d] + o
            go = sw * pt + lp
            watch |= _bit(lp, pt)
            if chk:
                if port_stamp[go] <= evt:  # unchanged: same cost, same availability
                    if masks and (tied >> lp) & 1:
                        n_tied += 1
                    continue
                any_changed = True
                if fallback or not masks:
                    redo = True
                    break
                changed |= np.int64(1) << lp
            if fallback:
                if xb_vc:
                    v = _free_vc(go, lo, hi, out_used, xout_busy, vt, bout, t)
                    if v < 0:  # every VC with room is being fed (or none has room)
                        wake = min(wake, _busy_wake(go, lo, hi, out_used, xout_busy, vt, bout,
                                                    xb_vc))
                        continue
                else:
                    if xout_busy[go] > t:
                        wake = min(wake, _busy_wake(go, lo, hi, out_used, xout_busy, vt, bout,
                                                    xb_vc))
                        continue
                    v = best_vc(go, lo, hi, out_used, vt, bout)  # only VCs with room
                    if v < 0:
                        continue
                occ = _occupancy(go, v, out_used, credits, out_down_in, bin_cap, port_occ, vt,
                                 port_vc)
                xw = t  # it can take the packet now (checked above)
            elif memo_on:
                v, occ, xw = _port_choice(go, lo, hi, out_used, xout_busy, vt, bout, xb_vc,
                                          out_down_in, credits, bin_cap, port_occ, port_vc,
                                          port_stamp, memo)
            else:
                v = best_vc(go, lo, hi, out_used, vt, bout + 1)  # full VCs compete too
                occ = _occupancy(go, v, out_used, credits, out_down_in, bin_cap, port_occ, vt,
                                 port_vc)
                xw = np.int64(-1)  # read once it matters (``_wake_at``)
            cost = occ * phits
            der = 0
            if o != tport:
                cost += DEROUTE_PENALTY
                der = 1
            if chk:  # a changed candidate: does it beat or join the tied set?
                w = _wake_at(xw, go, v, t, out_used, xout_busy, vt, bout, xb_vc)
                if cost < b_cost or (cost == b_cost and w <= t):
                    redo = True
                    break
                if cost == b_cost:
                    n_tied += 1
                    new_tied |= np.int64(1) << lp
                    wake = min(wake, w)
                continue
            if cost > best_cost:
                floor = min(floor, cost)
                continue
            w = _wake_at(xw, go, v, t, out_used, xout_busy, vt, bout, xb_vc)
            if cost < best_cost:  # a new lowest cost: the tied set starts again
                floor = min(floor, best_cost)
                best_cost = cost
                ties = 0
                best_lp = -1
                wake = w
                if masks:
                    new_tied = np.int64(1) << lp
            else:
                wake = min(wake, w)
                if masks:
                    new_tied |= np.int64(1) << lp
            # lowest cost first, then flow control, then one at random: the
            # draw is among the tied candidates that can take the packet now
            if w <= t:
                ties += 1
                if ties == 1 or rand_int(rng, ties) == 0:
                    best_lp = lp
                    best_v = v
                    best_der = der
        if redo:
            break
    if chk:
        if not any_changed:
            return -1, -1, 0
        if redo or n_tied == 0:
            return -2, -1, 0  # may succeed: evaluate in full
        head[ivc, H_TIED] = (tied & ~changed) | new_tied
        head[ivc, H_WAKE] = min(head[ivc, H_WAKE], wake)
        head[ivc, H_WATCH] = watch
        return -1, -1, 0
    if best_lp < 0 and not fallback:
        # every candidate at the lowest cost is busy or full: wait (a worse
        # free port is not taken) until one of them frees or a port changes
        head[ivc, H_WAKE] = wake
        head[ivc, H_COST] = best_cost
        head[ivc, H_TIED] = new_tied
        head[ivc, H_WATCH] = watch
        if pt <= 64:  # later checks need neither the packet nor the coordinates
            head[ivc, H_VCS] = lo | (hi << VCS_SHIFT)
            head[ivc, H_FLOOR] = floor
            head[ivc, H_MIN] = minimal
    elif best_lp < 0:  # nothing available: wait for a crossbar output or a change
        head[ivc, H_WAKE] = wake
        head[ivc, H_WATCH] = watch
    return best_lp, best_v, best_der


# ------------------------------------------------------------ cycle loop
# indices of the int64 counters array ``st``
S_FREE = 0
S_NACT = 1  # closed-loop ranks in the active list ``act``
S_INIT = 2  # 1 once the generation schedule is set up
S_SF_H = 3
S_SF_N = 4
S_DF_H = 5
S_DF_N = 6
S_INJECTED = 7
S_DELIVERED = 8
S_DROPPED = 9
S_PHIT_HOPS = 10
S_APPS_DONE = 11
S_IN_NET = 12
# slot 13 is not used (it held the last delivery's cycle, which nothing read); it
# stays so that the checkpoints of runs saved by earlier builds keep their layout
S_CYCLE = 14
S_EVT = 15  # event count: a change of an output port's occupancy or credits
N_ST = 16

# columns of the per-switch int64 table ``swst``
SW_EVT = 0  # event count of the last change of one of its output ports
SW_CHG = 1  # mask of its output ports changed since its crossbar was last allocated
SW_WAKE = 2  # first cycle at which a head may be grantable without a change
SW_LINK = 3  # first cycle at which one of its links may start a packet
SW_IN = 4  # packets in its input buffers
SW_WATCH = 5  # union of its input ports' watch masks (``ip[., IP_WATCH]``)
SW_INP = 6  # mask of its input ports holding packets (switches of <= 64 ports)
# column 7 is not used: it held a mask of output ports that the link stage walked
# until its branch-free pass over the wake-ups replaced it; it stays so that the
# records, and the checkpoints of runs saved by earlier builds, keep their layout
SW_VEVT = 8  # event count when its crossbar was last allocated (see the crossbar stage)
N_SW = 9

GEN_WHEEL = 1024  # buckets of the open-loop arrival wheel

# indices of the int64 parameter array ``cf``
C_P = 0
C_L = 1
C_R = 2
C_XB = 3
C_BIN = 4
C_BSRC = 5
C_ALLOC = 6
C_S = 7
C_E = 8
C_MEAS = 9
C_NFIN = 10
C_NPORTS = 11
C_PREFETCH = 12  # 1: issue the prefetches (see :func:`_prefetch`); 0: a small machine
N_CF = 13

#: VCs (ports x VCs per port) from which the loop prefetches: about 2.5 MiB of
#: per-VC records (queue, head, output queue records and rings), over a core's
#: L2 on the hosts measured.  Below it the records stay in the cache and the
#: prefetches only cost instructions (the 8x8 reference, 5,632 VCs, ran 0.98x
#: with them forced on; 8x8x8 1.22x, 16x16x16 1.09x: bench_prefetch.py).
PREFETCH_MIN_VCS = 16_384

# application kinds
K_UNIFORM = 0
K_FIXED = 1
K_ALL2ALL = 2
K_LIST = 3
K_ALL2ALL_ROUNDS = 4  # the study's schedule: M rounds of one packet to every peer

# indices of the routing parameter array ``prm`` after the fixed ones; the
# sides of the dimensions follow from ``PRM_SIDES``
PRM_OCCUPANCY = 10  # 1: cost = port occupancy + VC occupancy; 0: VC occupancy only
PRM_CHOICE = 11  # 1: fall back to the best *available* candidate; 0: wait for the best
PRM_XBAR = 12  # 1: crossbar busy per input and output VC; 0: per port
PRM_SIDES = 13


@njit(cache=True, inline="always")
def _shuffle_prefix(a, n, rng):
    """Shuffle ``a[:n]`` in place, uniformly (Fisher-Yates)."""
    for i in range(n - 1, 0, -1):
        j = rand_int(rng, i + 1)
        tmp = a[i]
        a[i] = a[j]
        a[j] = tmp


@njit(cache=True, inline="always")
def _vc_order(a, n, start, round_robin, rng):
    """``a[:n]``: the order in which to try the ``n`` VCs of a port.

    Round robin: cyclically from the port's pointer ``start``.  Random: a
    uniformly random permutation, so that no VC is favoured (a random start
    with a cyclic sweep would favour the VC after the last one tried).
    """
    for i in range(n):
        v = start + i if round_robin else i
        a[i] = v - n if v >= n else v
    if not round_robin:
        _shuffle_prefix(a, n, rng)


@njit(cache=True, inline="always")
def _pop_head(qr, ring, vc, pk):
    """Drop the head packet of VC ``vc`` (queue record ``qr[vc]``, input or output:
    the ``Q_*`` and ``O_*`` layouts are the same; packets in ``ring[vc]``) and
    record the next one's packet and ready cycle, or the VC as empty."""
    qr[vc, Q_H] = _wrap(qr[vc, Q_H] + 1, ring.shape[1])
    qr[vc, Q_N] -= 1
    if qr[vc, Q_N] > 0:
        nxt = ring[vc, qr[vc, Q_H]]
        qr[vc, Q_PKT] = nxt
        qr[vc, Q_RDY] = pk[nxt, F_READY]
    else:
        qr[vc, Q_RDY] = -1


@njit(cache=True, inline="always")
def _fifo_push(f, st, hi, ni, time, val):
    cap = f.shape[0]
    n = st[ni]
    if n >= cap:
        return False
    j = _wrap(st[hi] + n, cap)
    f[j, 0] = time
    f[j, 1] = val
    st[ni] = n + 1
    return True


@njit(cache=True, inline="always")
def _wrap(x, n):
    """``x % n`` for ``0 <= x < 2 n`` (ring-buffer indices), without a division."""
    return x - n if x >= n else x


@njit(cache=True, inline="always")
def _touch(g, s, lp, pt, st, port_stamp, swst):
    """Record a change of output port ``g`` (local port ``lp`` of switch
    ``s``)'s occupancy or credits."""
    e = st[S_EVT] + 1
    st[S_EVT] = e
    port_stamp[g] = e
    swst[s, SW_EVT] = e
    swst[s, SW_CHG] |= _bit(lp, pt)


@njit(cache=True, inline="always")
def _changed_mask(watch, g0, pt, port_stamp, evt):
    """Mask of the ports of ``watch`` (local ports of the switch whose first
    port is ``g0``) that changed after event count ``evt``; for ``watch ==
    -1`` (all ports) -1 if any changed, else 0.  Branch-free over the bits."""
    if watch == -1:
        for lp in range(pt):
            if port_stamp[g0 + lp] > evt:
                return np.int64(-1)
        return np.int64(0)
    cm = np.int64(0)
    m = watch
    while m != 0:
        lp = _ctz(m)
        cm |= np.int64(port_stamp[g0 + lp] > evt) << lp
        m &= m - 1
    return cm


@njit(cache=True, inline="always")
def _geometric(rng, prob):
    """Trials up to and including the first success of Bernoulli(``prob``)."""
    if prob >= 1.0:
        return np.int64(1)
    u = 1.0 - rand_float(rng)  # (0, 1]
    g = np.floor(np.log(u) / np.log1p(-prob))
    if g > 1e12:
        return np.int64(1_000_000_000_000)
    return np.int64(g) + 1


@njit(cache=True, inline="always")
def _schedule(r, when, gen_t, gw_head, gw_next):
    gen_t[r] = when
    b = when % GEN_WHEEL
    gw_next[r] = gw_head[b]
    gw_head[b] = r


# error_model="numpy": no division in the loop can be by zero, and without the
# ZeroDivisionError paths the inlined route has fewer exits to clean up after.
# _nrt=False: no reference counting.  Every array is the caller's (the scratch
# arrays ``visit`` and ``vorder`` too) and outlives the call; with the runtime
# on, the array arguments of the inlined helpers (route, _touch, ...) cost an
# atomic increment and decrement each per call, which refcount pruning cannot
# pair up across their branches: half of the loop's time went there.
@njit(cache=True, error_model="numpy", _nrt=False)
def run_cycles(
    t0,
    t1,
    cf,
    prm,
    st,
    rng,
    # topology
    coords,
    dim_base,
    out_down_in,
    in_up_out,
    # packets
    pk,
    free_stack,
    # input side
    in_q,
    credits,
    xin_busy,
    head,
    hq,
    ip,
    # output side
    out_q,
    oq,
    out_port_n,
    out_used,
    xout_busy,
    link_busy,
    out_rr,
    link_phits,
    port_stamp,
    link_wake,
    swst,
    port_occ,
    memo,
    # endpoints
    src_q,
    src_h,
    src_n,
    src_bits,
    inj_busy,
    ep_rank,
    # credit returns: timing wheel of input VCs, bucket = cycle % rows
    cwheel,
    cwheel_n,
    # event fifos (time, value)
    sfifo,
    dfifo,
    # applications
    app_kind,
    app_prob,
    app_rank0,
    app_nranks,
    app_vcset,
    app_total,
    app_wait,
    app_msize,
    app_stats,
    app_done,
    lat_hist,
    # ranks
    rank_ep,
    rank_app,
    rank_partner,
    rank_left,
    rank_m,
    rank_mleft,
    rank_dt,
    rank_msg_ptr,
    msg_dst,
    msg_size,
    msg_step,
    rank_recv_ptr,
    recv,
    expect,
    # generation schedule
    gen_t,
    gw_head,
    gw_next,
    act,
    in_act,
    vis,
    rank_made,
    # scratch: a switch's input ports and a port's VCs in visiting order
    visit,
    vorder,
):
    """Advance the simulation from ``t0`` to at most ``t1``; see module doc."""
    phits = cf[C_P]
    lat = cf[C_L]
    rdel = cf[C_R]
    xb = cf[C_XB]
    bsrc = cf[C_BSRC]
    rr_alloc = cf[C_ALLOC] == 1
    n_sw = cf[C_S]
    meas = cf[C_MEAS]
    n_fin = cf[C_NFIN]
    c = prm[0]
    pt = prm[1]
    pn = prm[2]
    v_set = prm[4]
    vt = prm[5]
    routing = prm[7]
    xb_vc = prm[PRM_XBAR] == 1
    n_ranks = rank_ep.shape[0]
    bin_cap = in_q.shape[1]
    bout_cap = out_q.shape[1]
    bsrc_cap = src_q.shape[1]
    n_hist = lat_hist.shape[0]
    n_wheel = cwheel.shape[0]
    pf = cf[C_PREFETCH] == 1
    # a head at its wake-up is checked (see _check_tied) under Omni-WAR, whose full
    # evaluation looks at every port of the dimensions left; a MIN head has one
    # candidate per dimension and mostly goes at its wake-up, so a check would only
    # come before the full evaluation
    wake_check = routing == ROUTING_OMNIWAR
    t = t0
    if st[S_INIT] == 0:  # first call: open-loop first arrivals, closed-loop ranks active
        st[S_INIT] = 1
        n_act = 0
        for r in range(n_ranks):
            a = rank_app[r]
            if app_kind[a] <= K_FIXED:
                if rank_left[r] != 0:
                    _schedule(r, t + _geometric(rng, app_prob[a]) - 1, gen_t, gw_head, gw_next)
            else:
                act[n_act] = r
                n_act += 1
                in_act[r] = 1
        st[S_NACT] = n_act
    while t < t1:
        if st[S_FREE] < n_ranks + 1:
            st[S_CYCLE] = t
            return STATUS_GROW
        measured = t >= meas
        # ------------------------------------------------------------ 0 events
        b = t % n_wheel
        for i in range(cwheel_n[b]):
            ivc = cwheel[b, i]
            credits[ivc] += 1
            uo = in_up_out[ivc // vt]
            if uo >= 0:  # the upstream port's cost changed and its link may send
                su = uo // pt
                lu = uo - su * pt
                port_occ[uo] -= 1
                _touch(uo, su, lu, pt, st, port_stamp, swst)
                if link_wake[uo] > t:
                    link_wake[uo] = t
                    if swst[su, SW_LINK] > t:
                        swst[su, SW_LINK] = t
        cwheel_n[b] = 0
        cap = sfifo.shape[0]
        while st[S_SF_N] > 0 and sfifo[st[S_SF_H], 0] <= t:
            ovc = sfifo[st[S_SF_H], 1]
            st[S_SF_H] = _wrap(st[S_SF_H] + 1, cap)
            st[S_SF_N] -= 1
            out_used[ovc] -= 1
            go = ovc // vt
            port_occ[go] -= 1
            so = go // pt
            _touch(go, so, go - so * pt, pt, st, port_stamp, swst)
        cap = dfifo.shape[0]
        while st[S_DF_N] > 0 and dfifo[st[S_DF_H], 0] <= t:
            p = dfifo[st[S_DF_H], 1]
            st[S_DF_H] = _wrap(st[S_DF_H] + 1, cap)
            st[S_DF_N] -= 1
            a = pk[p, F_APP]
            st[S_DELIVERED] += 1
            st[S_IN_NET] -= 1
            lt = t - pk[p, F_GEN]
            app_stats[a, 2] += 1  # delivered packets
            if measured:
                app_stats[a, 3] += 1  # delivered in window
            if pk[p, F_MEAS] != 0:
                app_stats[a, 4] += lt  # latency sum of measured packets
                app_stats[a, 5] += 1
                app_stats[a, 6] = max(app_stats[a, 6], lt)
                if app_wait[a] >= 0:  # background apps have wait = -1
                    lat_hist[min(lt, n_hist - 1)] += 1
            dr = pk[p, F_DRANK]
            if app_wait[a] > 0:
                recv[rank_recv_ptr[dr] + pk[p, F_STEP]] += 1
                if in_act[dr] == 0:  # its dependencies may be met now
                    in_act[dr] = 1
                    act[st[S_NACT]] = dr
                    st[S_NACT] += 1
            if app_total[a] > 0 and app_stats[a, 2] == app_total[a]:
                app_done[a] = t
                st[S_APPS_DONE] += 1
            top = st[S_FREE]
            free_stack[top] = p
            st[S_FREE] = top + 1
        # ---------------------------------------------------------- 1 generation
        # Visited: open-loop ranks whose next arrival is due (a timing wheel of
        # geometric gaps replaces one Bernoulli draw per rank and cycle: same
        # law, as the trials are independent) and the closed-loop ranks of the
        # active list (those that created a packet last cycle or were woken by
        # an injection from their endpoint or a delivery to them).
        n_vis = 0
        b = t % GEN_WHEEL
        r = gw_head[b]
        gw_head[b] = -1
        while r >= 0:
            nxt = gw_next[r]
            when = gen_t[r]
            if when == t:
                vis[n_vis] = r
                n_vis += 1
            elif when > t:
                _schedule(r, when, gen_t, gw_head, gw_next)
            r = nxt
        n_open = n_vis
        for i in range(st[S_NACT]):
            vis[n_vis] = act[i]
            n_vis += 1
        for vi in range(n_vis):
            r = vis[vi]
            a = rank_app[r]
            kind = app_kind[a]
            e = rank_ep[r]
            dr = -1
            step = 0
            if kind <= K_FIXED:
                left = rank_left[r]
                if left == 0:
                    continue
                if left > 0 and src_n[e] >= bsrc:
                    continue
                # due now: the Bernoulli(rate / P) trials are drawn as geometric
                # gaps between arrivals (see the generation stage)
                if measured:
                    app_stats[a, 0] += 1  # offered packets in window
                if src_n[e] >= bsrc:
                    st[S_DROPPED] += 1
                    continue
                if kind == K_UNIFORM:
                    k = app_nranks[a]
                    u = rand_int(rng, k - 1)
                    if u >= r - app_rank0[a]:
                        u += 1
                    dr = app_rank0[a] + u
                else:
                    dr = rank_partner[r]
                if left > 0:
                    rank_left[r] = left - 1
            elif kind == K_ALL2ALL_ROUNDS:
                j = rank_m[r]
                k = app_nranks[a]
                if j >= (k - 1) * app_msize[a] or src_n[e] >= bsrc:
                    continue
                dr = app_rank0[a] + (r - app_rank0[a] + 1 + j % (k - 1)) % k
                rank_m[r] = j + 1
                if measured:
                    app_stats[a, 0] += 1
            elif kind == K_ALL2ALL:
                m = rank_m[r]
                k = app_nranks[a]
                if m >= k - 1 or src_n[e] >= bsrc:
                    continue
                dr = app_rank0[a] + (r - app_rank0[a] + 1 + m) % k
                step = m
                rank_mleft[r] -= 1
                if rank_mleft[r] == 0:
                    rank_m[r] = m + 1
                    rank_mleft[r] = app_msize[a]
                if measured:
                    app_stats[a, 0] += 1
            else:
                m = rank_m[r]
                if m >= rank_msg_ptr[r + 1] or src_n[e] >= bsrc:
                    continue
                step = msg_step[m]
                if app_wait[a] != 0:
                    dt = rank_dt[r]
                    base = rank_recv_ptr[r]
                    nst = rank_recv_ptr[r + 1] - base
                    while dt < nst and recv[base + dt] >= expect[base + dt]:
                        dt += 1
                    rank_dt[r] = dt
                    if dt < step:
                        continue
                dr = msg_dst[m]
                rank_mleft[r] -= 1
                if rank_mleft[r] == 0:
                    rank_m[r] = m + 1
                    if m + 1 < rank_msg_ptr[r + 1]:
                        rank_mleft[r] = msg_size[m + 1]
                if measured:
                    app_stats[a, 0] += 1
            # create the packet
            top = st[S_FREE] - 1
            p = free_stack[top]
            st[S_FREE] = top
            de = rank_ep[dr]
            pk[p, F_DST] = de
            pk[p, F_SRC] = e
            pk[p, F_GEN] = t
            pk[p, F_READY] = t
            pk[p, F_HOPS] = 0
            pk[p, F_DER] = 0
            pk[p, F_INTER] = -1
            if routing == 2:
                isw = rand_int(rng, n_sw)
                if isw != e // c and isw != de // c:
                    pk[p, F_INTER] = isw
            pk[p, F_APP] = a
            pk[p, F_VCSET] = app_vcset[a]
            pk[p, F_STEP] = step
            pk[p, F_DRANK] = dr
            pk[p, F_MEAS] = 1 if measured else 0
            src_q[e, _wrap(src_h[e] + src_n[e], bsrc_cap)] = p
            src_n[e] += 1
            src_bits[e >> 6] |= np.int64(1) << (e & 63)
            st[S_INJECTED] += 1
            st[S_IN_NET] += 1
            app_stats[a, 1] += 1  # packets created
            rank_made[r] = t
        for vi in range(n_open):  # next arrivals
            r = vis[vi]
            left = rank_left[r]
            gen_t[r] = -1
            if left == 0:
                continue
            if left > 0 and src_n[rank_ep[r]] >= bsrc:
                continue  # no trials while the queue is full: an injection resumes them
            _schedule(r, t + _geometric(rng, app_prob[rank_app[r]]), gen_t, gw_head, gw_next)
        n_act = 0
        for vi in range(n_open, n_vis):  # closed-loop ranks that made no packet rest
            r = vis[vi]
            if rank_made[r] == t:
                act[n_act] = r
                n_act += 1
            else:
                in_act[r] = 0
        st[S_NACT] = n_act
        # ------------------------------------------------------------- 2 links
        # only switches with a link that may start now: link_wake[g] is the
        # first cycle at which link g may send without a change of state
        # (credit returns and crossbar grants bring it forward)
        # Switches of <= 64 ports first gather, in one branch-free pass over
        # their ports' wake-ups, the mask of the ports due now and the earliest
        # wake-up of the others, then walk the due ports' bits (ascending, as
        # the full sweep).
        for s in range(n_sw):
            if swst[s, SW_LINK] > t:
                continue
            w_s = NEVER
            wide = pt > 64
            g0 = s * pt
            seq = np.int64(0)
            if not wide:
                for lp in range(pt):
                    lw = link_wake[g0 + lp]
                    due = lw <= t
                    seq |= np.int64(due) << lp
                    w_s = min(w_s, NEVER if due else lw)
            i = 0
            while True:
                if wide:
                    if i >= pt:
                        break
                    lp = i
                    i += 1
                else:
                    if seq == 0:
                        break
                    lp = _ctz(seq)
                    seq &= seq - 1
                    if pf and seq != 0:  # the next due port's records, while this one sends
                        g_next = g0 + _ctz(seq)
                        _prefetch(oq, g_next * vt * N_O)
                        _prefetch(link_busy, g_next)
                        d_next = out_down_in[g_next]
                        if d_next >= 0:  # the input VCs it feeds, on another switch
                            _prefetch(hq, d_next * vt * N_Q)
                g = g0 + lp
                lw = link_wake[g]
                if lw > t:
                    w_s = min(w_s, lw)
                    continue
                if out_port_n[g] == 0:
                    link_wake[g] = NEVER
                    continue
                if link_busy[g] > t:
                    link_wake[g] = link_busy[g]
                    w_s = min(w_s, link_busy[g])
                    continue
                _vc_order(vorder, vt, out_rr[g], rr_alloc, rng)
                down = out_down_in[g]
                nw = NEVER  # without a send: the earliest head to become ready
                for k in range(vt):
                    v = vorder[k]
                    ovc = g * vt + v
                    rdy = oq[ovc, O_RDY]
                    if rdy < 0:
                        continue  # empty
                    if rdy > t:
                        nw = min(nw, rdy)
                        continue
                    p = oq[ovc, O_PKT]
                    if down >= 0:
                        dvc = down * vt + v
                        if credits[dvc] <= 0:
                            continue  # its credit return wakes the link
                        credits[dvc] -= 1
                        port_occ[g] += 1
                        _touch(g, s, lp, pt, st, port_stamp, swst)
                        if hq[dvc, Q_N] == 0:
                            head[dvc, H_EVT] = -1  # a new head
                            hq[dvc, Q_PKT] = p
                            hq[dvc, Q_RDY] = t + lat
                        in_q[dvc, _wrap(hq[dvc, Q_H] + hq[dvc, Q_N], bin_cap)] = p
                        hq[dvc, Q_N] += 1
                        ip[down, IP_N] += 1
                        sd = down // pt
                        swst[sd, SW_IN] += 1
                        swst[sd, SW_INP] |= _bit(down - sd * pt, pt)
                        if ip[down, IP_WAKE] > t + lat:
                            ip[down, IP_WAKE] = t + lat
                        if swst[sd, SW_WAKE] > t + lat:
                            swst[sd, SW_WAKE] = t + lat
                        pk[p, F_READY] = t + lat
                        pk[p, F_HOPS] += 1
                        st[S_PHIT_HOPS] += phits
                    else:
                        if not _fifo_push(dfifo, st, S_DF_H, S_DF_N, t + lat + phits, p):
                            st[S_CYCLE] = t
                            return STATUS_ERROR
                    _pop_head(oq, out_q, ovc, pk)
                    out_port_n[g] -= 1
                    if measured:
                        link_phits[g] += phits
                    link_busy[g] = t + phits
                    if not _fifo_push(sfifo, st, S_SF_H, S_SF_N, t + phits, ovc):
                        st[S_CYCLE] = t
                        return STATUS_ERROR
                    if rr_alloc:
                        out_rr[g] = _wrap(v + 1, vt)
                    nw = t + phits
                    break
                link_wake[g] = nw
                w_s = min(w_s, nw)
            swst[s, SW_LINK] = w_s
        # ---------------------------------------------------------- 3 crossbar
        # Only heads whose failure is not certain are evaluated (see route):
        # an input port is visited when a cycle is reached at which one of its
        # heads arrives or may find a crossbar output free (``IP_WAKE``), or
        # when one of the output ports its blocked heads watch (``IP_WATCH``)
        # changed since the switch was last visited (``SW_CHG``); a switch when
        # one of its input ports is.  The random visiting orders of ports and
        # VCs are drawn for the switches and ports visited; the evaluations skipped were
        # failures whatever the draws, so the law of the run is that of a
        # sweep over every head.
        for s in range(n_sw):
            if swst[s, SW_IN] == 0:
                continue
            if swst[s, SW_WAKE] > t and (swst[s, SW_CHG] & swst[s, SW_WATCH]) == 0:
                continue
            chg = swst[s, SW_CHG]
            swst[s, SW_CHG] = 0  # from here on: changes made by this allocation
            # a head evaluated in the previous allocation (``H_EVT >= vevt``) can
            # only have seen its ports change since in ``chg`` or in this
            # allocation's own changes: their union with its watch mask is a
            # superset of its changed ports, which gives the same verdict (an
            # unchanged candidate recomputes to its recorded cost and wake-up)
            vevt = swst[s, SW_VEVT]
            swst[s, SW_VEVT] = st[S_EVT]
            ps = t % pt if rr_alloc else 0  # round robin: a pointer advanced every cycle
            # The input ports to visit: switches of <= 64 ports take the set
            # bits of the mask of ports holding packets (from ``ps`` on,
            # cyclically), wider ones every port.  The random allocator then
            # visits them in a uniformly random order (Fisher-Yates): a random
            # *start* with a cyclic sweep would give port ``i`` priority over
            # port ``i + 1`` in all but one start, i.e. favour the switch's
            # first endpoint over its last one by 15 to 7 on a 22-port switch.
            # The wake-up and watch mask of the switch are gathered on the way
            # (a port's own visit is the only thing in this stage that changes
            # its packets, wake-up or watch mask).
            w_s = NEVER
            m_s = np.int64(0)
            wide = pt > 64
            n_vis = 0
            if wide:
                for i in range(pt):
                    lp = ps + i
                    if lp >= pt:
                        lp -= pt
                    visit[n_vis] = lp
                    if pf:
                        _prefetch(ip, (s * pt + lp) * N_IP)
                    n_vis += 1
            else:
                m_in = swst[s, SW_INP]
                hi_m = (m_in >> ps) << ps
                seq = hi_m
                rest = m_in ^ hi_m
                while seq != 0 or rest != 0:
                    if seq == 0:
                        seq = rest
                        rest = np.int64(0)
                    visit[n_vis] = _ctz(seq)
                    if pf:  # every port it will look at
                        _prefetch(ip, (s * pt + visit[n_vis]) * N_IP)
                    n_vis += 1
                    seq &= seq - 1
            if not rr_alloc:
                _shuffle_prefix(visit, n_vis, rng)
            for i_vis in range(n_vis):
                lp = visit[i_vis]
                g = s * pt + lp
                if pf and i_vis + 1 < n_vis:  # the next port's VC records, while this one works
                    _prefetch_port(s * pt + visit[i_vis + 1], vt, xb_vc, hq, head, xin_busy)
                if ip[g, IP_N] == 0:
                    continue
                if ip[g, IP_WAKE] > t and (ip[g, IP_WATCH] & (chg | swst[s, SW_CHG])) == 0:
                    w_s = min(w_s, ip[g, IP_WAKE])
                    m_s |= ip[g, IP_WATCH]
                    continue
                if not xb_vc and xin_busy[g] > t:
                    ip[g, IP_WAKE] = xin_busy[g]
                    w_s = min(w_s, ip[g, IP_WAKE])
                    m_s |= ip[g, IP_WATCH]
                    continue
                _vc_order(vorder, vt, ip[g, IP_RR], rr_alloc, rng)
                if pf:  # the ready heads' packets, all at once
                    _prefetch_packets(g, vt, t, hq, pk)
                w_g = NEVER
                m_g = np.int64(0)
                for k in range(vt):
                    v = vorder[k]
                    ivc = g * vt + v
                    rdy = hq[ivc, Q_RDY]
                    if rdy < 0:
                        continue  # empty
                    if rdy > t:
                        w_g = min(w_g, rdy)
                        continue
                    if xb_vc and xin_busy[ivc] > t:  # this VC still feeds its last grant
                        w_g = min(w_g, xin_busy[ivc])
                        continue
                    p = hq[ivc, Q_PKT]
                    he = head[ivc, H_EVT]
                    cm = np.int64(0)  # its candidate ports changed since ``he``
                    if he >= 0:
                        timed = t >= head[ivc, H_WAKE]
                        if timed and (head[ivc, H_VCS] < 0 or not wake_check):
                            head[ivc, H_EVT] = -1  # time-triggered: evaluate in full
                        else:
                            if swst[s, SW_EVT] > he:
                                if he >= vevt and not wide:
                                    cm = head[ivc, H_WATCH] & (chg | swst[s, SW_CHG])
                                else:
                                    cm = _changed_mask(head[ivc, H_WATCH], s * pt, pt, port_stamp,
                                                       he)
                            if timed:  # a tied port may be free: the check looks again
                                cm |= head[ivc, H_TIED]
                            elif cm == 0:  # none of its candidate ports changed: fails for sure
                                head[ivc, H_EVT] = st[S_EVT]  # still certain: move the mark on
                                w_g = min(w_g, head[ivc, H_WAKE])
                                m_g |= head[ivc, H_WATCH]
                                continue
                    # one call site (route is inlined): a check call that asks
                    # for a full evaluation (-2) loops once more in full
                    while True:
                        olp, ov, der = route(
                            s, p, t, pk, coords, dim_base, out_used, xout_busy, rng, prm,
                            out_down_in, credits, bin_cap, head, ivc, port_stamp, port_occ, cm,
                            memo,
                        )
                        if olp != -2:
                            break
                        head[ivc, H_EVT] = -1
                    if olp < 0:
                        head[ivc, H_EVT] = st[S_EVT]
                        w_g = min(w_g, head[ivc, H_WAKE])
                        m_g |= head[ivc, H_WATCH]
                        continue
                    _pop_head(hq, in_q, ivc, pk)
                    ip[g, IP_N] -= 1
                    swst[s, SW_IN] -= 1
                    if ip[g, IP_N] == 0 and pt <= 64:
                        swst[s, SW_INP] &= ~(np.int64(1) << lp)
                    head[ivc, H_EVT] = -1  # the next packet is a new head
                    # the crossbar moves ``speedup`` phits/cycle but cannot outrun
                    # the packet's tail, still arriving at 1 phit/cycle
                    done = t + xb
                    tail = pk[p, F_READY] + phits
                    if tail > done:
                        done = tail
                    b = (done + lat) % n_wheel
                    if cwheel_n[b] >= cwheel.shape[1]:
                        st[S_CYCLE] = t
                        return STATUS_ERROR
                    cwheel[b, cwheel_n[b]] = ivc
                    cwheel_n[b] += 1
                    go = s * pt + olp
                    ovc = go * vt + ov
                    if xb_vc:  # only this input VC and output VC are held
                        xin_busy[ivc] = done
                        xout_busy[ovc] = done
                        w_g = min(w_g, done)
                    else:
                        xin_busy[g] = done
                        w_g = done  # every head of the port waits for it
                        xout_busy[go] = done
                    if oq[ovc, O_N] == 0:
                        oq[ovc, O_PKT] = p
                        oq[ovc, O_RDY] = t + rdel
                    out_q[ovc, _wrap(oq[ovc, O_H] + oq[ovc, O_N], bout_cap)] = p
                    oq[ovc, O_N] += 1
                    out_used[ovc] += 1
                    port_occ[go] += 1
                    out_port_n[go] += 1
                    _touch(go, s, olp, pt, st, port_stamp, swst)
                    if link_wake[go] > t + rdel:
                        link_wake[go] = t + rdel
                        if swst[s, SW_LINK] > t + rdel:
                            swst[s, SW_LINK] = t + rdel
                    pk[p, F_READY] = t + rdel
                    if der != 0:
                        pk[p, F_DER] += 1
                    if rr_alloc:
                        ip[g, IP_RR] = _wrap(v + 1, vt)
                    if not xb_vc:
                        break
                ip[g, IP_WAKE] = w_g
                ip[g, IP_WATCH] = m_g
                if ip[g, IP_N] > 0:
                    w_s = min(w_s, w_g)
                    m_s |= m_g
            swst[s, SW_WAKE] = w_s
            swst[s, SW_WATCH] = m_s
        # --------------------------------------------------------- 4 injection
        # the endpoints with a queued packet, in ascending order (the set bits
        # of ``src_bits``): the others would be passed over without a draw
        for wi in range(src_bits.shape[0]):
            m_e = src_bits[wi]
            while m_e != 0:
                e = wi * 64 + _ctz(m_e)
                m_e &= m_e - 1
                if inj_busy[e] > t:
                    continue
                p = src_q[e, src_h[e]]
                s = e // c
                g = s * pt + pn + e % c
                base = pk[p, F_VCSET] * v_set
                best = -1
                best_cr = 0
                for v in range(base, base + v_set):
                    cr = credits[g * vt + v]
                    if cr > best_cr:
                        best_cr = cr
                        best = v
                if best < 0:
                    continue
                ivc = g * vt + best
                credits[ivc] -= 1
                if hq[ivc, Q_N] == 0:
                    head[ivc, H_EVT] = -1
                    hq[ivc, Q_PKT] = p
                    hq[ivc, Q_RDY] = t + lat
                in_q[ivc, _wrap(hq[ivc, Q_H] + hq[ivc, Q_N], bin_cap)] = p
                hq[ivc, Q_N] += 1
                ip[g, IP_N] += 1
                swst[s, SW_IN] += 1
                swst[s, SW_INP] |= _bit(pn + e % c, pt)
                if ip[g, IP_WAKE] > t + lat:
                    ip[g, IP_WAKE] = t + lat
                if swst[s, SW_WAKE] > t + lat:
                    swst[s, SW_WAKE] = t + lat
                pk[p, F_READY] = t + lat
                src_h[e] = _wrap(src_h[e] + 1, bsrc_cap)
                src_n[e] -= 1
                if src_n[e] == 0:
                    src_bits[e >> 6] &= ~(np.int64(1) << (e & 63))
                inj_busy[e] = t + phits
                r = ep_rank[e]  # its rank may have waited for room in the queue
                if app_kind[rank_app[r]] <= K_FIXED:
                    if gen_t[r] < 0 and rank_left[r] > 0:  # trials resume next cycle
                        _schedule(r, t + _geometric(rng, app_prob[rank_app[r]]), gen_t, gw_head,
                                  gw_next)
                elif in_act[r] == 0:
                    in_act[r] = 1
                    act[st[S_NACT]] = r
                    st[S_NACT] += 1
        t += 1
        if n_fin > 0 and st[S_APPS_DONE] >= n_fin:
            st[S_CYCLE] = t
            return STATUS_DONE
    st[S_CYCLE] = t
    return STATUS_LIMIT
