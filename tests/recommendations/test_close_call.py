"""A calibrated answer says when its fastest policies are too close to call: the gap
between them is smaller than the calibration's seeds of them lay apart, so another
placement of the same policies may swap them (the Random Endpoint / Full Spread coin
toss of the agreement report, docs/operations.md "What the agreement means")."""

from __future__ import annotations

from recommendations.services import calibration as calibration_service
from recommendations.services.calibration import close_call_caveat


def _placed(*policies: str) -> list[dict]:
    return [{"policy": p, "endpoints": [0]} for p in policies]


def test_policies_within_the_seed_spread_of_the_fastest_are_named():
    cycles = {"full_spread": 1000.0, "random_switch": 1014.0, "random_endpoint": 1300.0,
              "row": 2000.0}
    note = close_call_caveat(_placed(*cycles), cycles,
                             {"full_spread": 0.05, "random_switch": 0.01,
                              "random_endpoint": 0.35, "row": 0.01})
    assert note == calibration_service.CLOSE_CALL_CAVEAT.format(
        others="random_switch, random_endpoint", gap="30.0%", policy="full_spread",
        spread="35%")


def test_a_clear_first_choice_gets_no_caveat():
    cycles = {"diagonal": 1000.0, "row": 1200.0}
    assert close_call_caveat(_placed(*cycles), cycles, {"diagonal": 0.1, "row": 0.1}) == ""
    # without a recorded spread (one seed, an older table) nothing is claimed
    assert close_call_caveat(_placed(*cycles), {"diagonal": 1000.0, "row": 1001.0}, {}) == ""


def test_only_placed_candidates_count():
    cycles = {"full_spread": 1000.0, "random_endpoint": 1010.0, "diagonal": 1500.0}
    spread = {"full_spread": 0.2, "random_endpoint": 0.2, "diagonal": 0.0}
    candidates = [*_placed("full_spread", "diagonal"),
                  {"policy": "random_endpoint", "error": "no room"}]
    assert close_call_caveat(candidates, cycles, spread) == ""
    assert close_call_caveat(_placed("full_spread"), cycles, spread) == ""
