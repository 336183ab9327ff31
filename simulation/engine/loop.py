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
   its output VCs (round-robin or random start) whose downstream input VC
   has a credit (a full packet of space: VCT).  The link is busy ``P``
   cycles; the head reaches the downstream input buffer ``link_latency``
   cycles later.
3. *Crossbar*: separable allocation, switch by switch: each idle input port
   offers the head packet of one VC whose head has arrived; the routing
   function picks an output port and VC that can take it now.  Input and
   output crossbar ports are then busy until the tail has crossed:
   ``ceil(P / speedup)`` cycles, but not before the tail has arrived (head
   arrival + ``P``): the crossbar cannot outrun a packet still streaming
   in, so speedup only helps packets already buffered.  The packet may
   leave on its output link ``router_latency`` cycles after the grant
   (cut-through).
4. *Injection*: each endpoint whose injection link is idle sends the head of
   its source queue to an input VC of its switch that has a credit.

Zero-load latency over ``h`` switch hops is therefore
``(h + 1) * (router_latency + link_latency) + link_latency + P``.

All numba code of the engine lives in this one module on purpose: numba's
on-disk cache (``cache=True``) is invalidated only when the file defining
the cached function changes, not when a function it calls in another module
does.  The generator (:mod:`.rng`) and routing (:mod:`.routing`) modules
document and re-export their parts.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = [
    "K_ALL2ALL_ROUNDS",
    "PRM_CHOICE",
    "PRM_OCCUPANCY",
    "PRM_SIDES",
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
_S33 = np.uint64(33)
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
    """Uniform integer in [0, n) for 0 < n < 2**31."""
    return np.int64((rand_u64(state) >> _S33) % np.uint64(n))


# --------------------------------------------------------------- routing
DEROUTE_PENALTY = 64
ROUTING_CODES = {"dor": 0, "min": 1, "valiant": 2, "omniwar": 3}

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


@njit(cache=True)
def route(
    sw, p, t, pk, coords, dim_base, out_used, xout_busy, rng, prm, out_down_in, credits, bin_cap
):  # fmt: skip
    """Choose ``(out_local_port, vc, deroute)`` for packet ``p`` at switch ``sw``.

    DOR and Valiant have one candidate port; MIN and Omni-WAR rank theirs by
    cost (occupancy of the emptiest VC of the class, in phits, plus the
    deroute penalty).  The choice is returned only if its crossbar output is
    free this cycle and its VC has a free slot, else ``(-1, -1, 0)`` and the
    packet retries next cycle.
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
    if target == sw:  # eject
        go = sw * pt + pn + dst % c
        if xout_busy[go] > t:
            return -1, -1, 0
        v = best_vc(go, base, base + v_set, out_used, vt, bout)
        if v < 0:
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
                if xout_busy[go] > t:
                    return -1, -1, 0
                v = best_vc(go, lo, hi, out_used, vt, bout)
                if v < 0:
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
    best_cost = np.int64(1) << 62
    best_der = 0
    ties = 0
    allow_der = routing == 3 and pk[p, F_DER] < q
    port_occ = prm[PRM_OCCUPANCY] == 1
    fallback = prm[PRM_CHOICE] == 1
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
        for o in range(first, last):
            lp = dim_base[d] + o
            go = sw * pt + lp
            if fallback:
                if xout_busy[go] > t:
                    continue
                v = best_vc(go, lo, hi, out_used, vt, bout)  # only VCs with room
                if v < 0:
                    continue
            else:
                v = best_vc(go, lo, hi, out_used, vt, bout + 1)  # full VCs compete too
            down = out_down_in[go] * vt
            occ = out_used[go * vt + v] + bin_cap - credits[down + v]
            if port_occ:  # the whole port's load (every VC), as the study's router adds
                for w in range(vt):
                    occ += out_used[go * vt + w] + bin_cap - credits[down + w]
            cost = np.int64(occ) * phits
            der = 0
            if o != tport:
                cost += DEROUTE_PENALTY
                der = 1
            if cost > best_cost:
                continue
            if cost < best_cost:
                best_cost = cost
                ties = 1
                best_lp = lp
                best_v = v
                best_der = der
            else:
                ties += 1
                if rand_int(rng, ties) == 0:
                    best_lp = lp
                    best_v = v
                    best_der = der
    if best_lp >= 0:
        go = sw * pt + best_lp
        if xout_busy[go] > t or out_used[go * vt + best_v] >= bout:
            return -1, -1, 0  # best port busy or its VC full: wait and retry
    return best_lp, best_v, best_der


# ------------------------------------------------------------ cycle loop
# indices of the int64 counters array ``st``
S_FREE = 0
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
S_LAST_DELIV = 13
S_CYCLE = 14
N_ST = 16

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
N_CF = 12

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
PRM_SIDES = 12


@njit(cache=True, inline="always")
def _fifo_push(f, st, hi, ni, time, val):
    cap = f.shape[0]
    n = st[ni]
    if n >= cap:
        return False
    j = (st[hi] + n) % cap
    f[j, 0] = time
    f[j, 1] = val
    st[ni] = n + 1
    return True


@njit(cache=True)
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
    # packets
    pk,
    free_stack,
    # input side
    in_q,
    in_h,
    in_n,
    in_port_n,
    credits,
    xin_busy,
    in_rr,
    # output side
    out_q,
    out_h,
    out_n,
    out_port_n,
    out_used,
    xout_busy,
    link_busy,
    out_rr,
    link_phits,
    sw_rr,
    # endpoints
    src_q,
    src_h,
    src_n,
    inj_busy,
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
    n_ports = cf[C_NPORTS]
    c = prm[0]
    pt = prm[1]
    pn = prm[2]
    v_set = prm[4]
    vt = prm[5]
    routing = prm[7]
    n_ranks = rank_ep.shape[0]
    bin_cap = in_q.shape[1]
    bout_cap = out_q.shape[1]
    bsrc_cap = src_q.shape[1]
    n_hist = lat_hist.shape[0]
    n_wheel = cwheel.shape[0]
    t = t0
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
        cwheel_n[b] = 0
        cap = sfifo.shape[0]
        while st[S_SF_N] > 0 and sfifo[st[S_SF_H], 0] <= t:
            ovc = sfifo[st[S_SF_H], 1]
            st[S_SF_H] = (st[S_SF_H] + 1) % cap
            st[S_SF_N] -= 1
            out_used[ovc] -= 1
        cap = dfifo.shape[0]
        while st[S_DF_N] > 0 and dfifo[st[S_DF_H], 0] <= t:
            p = dfifo[st[S_DF_H], 1]
            st[S_DF_H] = (st[S_DF_H] + 1) % cap
            st[S_DF_N] -= 1
            a = pk[p, F_APP]
            st[S_DELIVERED] += 1
            st[S_IN_NET] -= 1
            st[S_LAST_DELIV] = t
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
            if app_total[a] > 0 and app_stats[a, 2] == app_total[a]:
                app_done[a] = t
                st[S_APPS_DONE] += 1
            top = st[S_FREE]
            free_stack[top] = p
            st[S_FREE] = top + 1
        # ---------------------------------------------------------- 1 generation
        for r in range(n_ranks):
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
                if rand_float(rng) >= app_prob[a]:
                    continue
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
            src_q[e, (src_h[e] + src_n[e]) % bsrc_cap] = p
            src_n[e] += 1
            st[S_INJECTED] += 1
            st[S_IN_NET] += 1
            app_stats[a, 1] += 1  # packets created
        # ------------------------------------------------------------- 2 links
        for g in range(n_ports):
            if out_port_n[g] == 0 or link_busy[g] > t:
                continue
            if rr_alloc:
                vs = out_rr[g]
            else:
                vs = rand_int(rng, vt)
            down = out_down_in[g]
            for k in range(vt):
                v = vs + k
                if v >= vt:
                    v -= vt
                ovc = g * vt + v
                if out_n[ovc] == 0:
                    continue
                p = out_q[ovc, out_h[ovc]]
                if pk[p, F_READY] > t:
                    continue
                if down >= 0:
                    dvc = down * vt + v
                    if credits[dvc] <= 0:
                        continue
                    credits[dvc] -= 1
                    in_q[dvc, (in_h[dvc] + in_n[dvc]) % bin_cap] = p
                    in_n[dvc] += 1
                    in_port_n[down] += 1
                    pk[p, F_READY] = t + lat
                    pk[p, F_HOPS] += 1
                    st[S_PHIT_HOPS] += phits
                else:
                    if not _fifo_push(dfifo, st, S_DF_H, S_DF_N, t + lat + phits, p):
                        st[S_CYCLE] = t
                        return STATUS_ERROR
                out_h[ovc] = (out_h[ovc] + 1) % bout_cap
                out_n[ovc] -= 1
                out_port_n[g] -= 1
                if measured:
                    link_phits[g] += phits
                link_busy[g] = t + phits
                if not _fifo_push(sfifo, st, S_SF_H, S_SF_N, t + phits, ovc):
                    st[S_CYCLE] = t
                    return STATUS_ERROR
                if rr_alloc:
                    out_rr[g] = (v + 1) % vt
                break
        # ---------------------------------------------------------- 3 crossbar
        for s in range(n_sw):
            if rr_alloc:
                ps = sw_rr[s]
                sw_rr[s] = (ps + 1) % pt
            else:
                ps = rand_int(rng, pt)
            for i in range(pt):
                lp = ps + i
                if lp >= pt:
                    lp -= pt
                g = s * pt + lp
                if in_port_n[g] == 0 or xin_busy[g] > t:
                    continue
                if rr_alloc:
                    vs = in_rr[g]
                else:
                    vs = rand_int(rng, vt)
                for k in range(vt):
                    v = vs + k
                    if v >= vt:
                        v -= vt
                    ivc = g * vt + v
                    if in_n[ivc] == 0:
                        continue
                    p = in_q[ivc, in_h[ivc]]
                    if pk[p, F_READY] > t:
                        continue
                    olp, ov, der = route(
                        s, p, t, pk, coords, dim_base, out_used, xout_busy, rng, prm,
                        out_down_in, credits, bin_cap,
                    )
                    if olp < 0:
                        continue
                    in_h[ivc] = (in_h[ivc] + 1) % bin_cap
                    in_n[ivc] -= 1
                    in_port_n[g] -= 1
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
                    xin_busy[g] = done
                    go = s * pt + olp
                    xout_busy[go] = done
                    ovc = go * vt + ov
                    out_q[ovc, (out_h[ovc] + out_n[ovc]) % bout_cap] = p
                    out_n[ovc] += 1
                    out_used[ovc] += 1
                    out_port_n[go] += 1
                    pk[p, F_READY] = t + rdel
                    if der != 0:
                        pk[p, F_DER] += 1
                    if rr_alloc:
                        in_rr[g] = (v + 1) % vt
                    break
        # --------------------------------------------------------- 4 injection
        n_ep = src_n.shape[0]
        for e in range(n_ep):
            if src_n[e] == 0 or inj_busy[e] > t:
                continue
            p = src_q[e, src_h[e]]
            g = (e // c) * pt + pn + e % c
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
            in_q[ivc, (in_h[ivc] + in_n[ivc]) % bin_cap] = p
            in_n[ivc] += 1
            in_port_n[g] += 1
            pk[p, F_READY] = t + lat
            src_h[e] = (src_h[e] + 1) % bsrc_cap
            src_n[e] -= 1
            inj_busy[e] = t + phits
        t += 1
        if n_fin > 0 and st[S_APPS_DONE] >= n_fin:
            st[S_CYCLE] = t
            return STATUS_DONE
    st[S_CYCLE] = t
    return STATUS_LIMIT
