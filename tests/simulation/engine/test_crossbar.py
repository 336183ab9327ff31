"""The crossbar's granularity (``crossbar: port`` / ``vc``).

``port`` (the default, engine 2.0's model) holds the whole input and output ports
for a crossing; ``vc`` (the study's simulator) holds only the input VC and the
output VC, so a candidate is refused only when its own VC is being fed or full.
The routing function is called directly on a hand-set state, so each case checks
exactly one rule; the whole-run tests check that ``vc`` runs are sound and that
the default's configurations and hashes did not change.
"""

from __future__ import annotations

import pytest

from simulation.engine import SimConfig, simulate
from simulation.services import canonical_config, config_hash

from .conftest import T_ROUTE as T
from .conftest import route_at_switch_0 as _route
from .conftest import run


def _eject_port() -> int:
    """Local port of endpoint 1 (switch 0): after the 3 + 3 network ports."""
    return 6 + 1


def test_an_ejection_port_busy_on_one_vc_takes_the_packet_on_another_only_per_vc() -> None:
    lp = _eject_port()
    assert _route("port", 1, {(lp, 0): T + 5}) == ((-1, -1, 0), T + 5)
    (port, vc, _), _ = _route("vc", 1, {(lp, 0): T + 5})
    assert (port, vc) == (lp, 1)


def test_every_vc_being_fed_wakes_the_head_when_the_first_frees() -> None:
    lp = _eject_port()
    busy = {(lp, v): T + 3 + v for v in range(4)}
    assert _route("vc", 1, busy) == ((-1, -1, 0), T + 3)


def test_a_candidate_is_refused_only_when_its_own_vc_is_being_fed() -> None:
    # endpoint 4 sits on switch 1, one hop away (one minimal port); a hop-0
    # packet of MIN routing may use VC 0 only (one VC per hop class)
    (lp, vc, _), _ = _route("port", 4, {})
    assert vc == 0 and 0 <= lp < 6
    assert _route("port", 4, {(lp, 3): T + 9}) == ((-1, -1, 0), T + 9)
    assert _route("vc", 4, {(lp, 3): T + 9})[0] == (lp, 0, 0)
    assert _route("vc", 4, {(lp, 0): T + 9}) == ((-1, -1, 0), T + 9)


@pytest.mark.parametrize("routing", ["dor", "min", "omniwar"])
def test_per_vc_runs_conserve_and_keep_the_zero_load_latency(routing: str) -> None:
    kw = {"sides": (4, 4), "concentration": 4, "ranks": 64, "routing": routing,
          "crossbar": "vc", "seed": 3}
    res = run(**kw, rate=0.9, max_cycles=4_000, warmup_cycles=500)
    assert res.packets_injected == res.packets_delivered + res.packets_in_flight
    assert res.throughput > 0.5
    # a lone packet over one hop: (h + 1) * (router + link) + link + P cycles
    one = run([[0, 4]], sides=(4, 4), concentration=4, ranks=2, routing=routing,
              crossbar="vc", pattern="all2all", message_packets=1)
    assert one.apps[0].completion_cycles is not None
    assert one.latency_mean == 2 * 2 + 1 + 16


def test_per_vc_and_per_port_runs_differ_and_both_are_deterministic() -> None:
    kw = {"sides": (4, 4), "concentration": 4, "ranks": 64, "routing": "omniwar",
          "rate": 1.0, "max_cycles": 3_000, "seed": 5}
    port = simulate(SimConfig(**kw))
    vc = simulate(SimConfig(**kw, crossbar="vc"))
    assert simulate(SimConfig(**kw, crossbar="vc")).packets_delivered == vc.packets_delivered
    assert vc.packets_delivered != port.packets_delivered


def test_the_default_keeps_the_configurations_and_hashes_stored_before_it() -> None:
    default = SimConfig()
    assert "crossbar" not in default.to_dict()
    assert "crossbar" not in canonical_config(default)
    assert config_hash(canonical_config(SimConfig.from_dict({"crossbar": "port"}))) == \
        config_hash(canonical_config(default))
    assert config_hash(canonical_config(SimConfig(crossbar="vc"))) != \
        config_hash(canonical_config(default))
    assert SimConfig.from_dict(SimConfig(crossbar="vc").to_dict()).crossbar == "vc"


def test_an_unknown_crossbar_is_refused_naming_the_field() -> None:
    with pytest.raises(ValueError, match="crossbar"):
        SimConfig(crossbar="flit")
