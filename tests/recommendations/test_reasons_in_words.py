"""The recommendation's reasons read as sentences for an operator, not log lines (issue
22, defect 8): the trial showed "only 0% faster … (needs 20%, 10% for each)"."""

from __future__ import annotations

import pytest

from allocation.services import jobs, machines
from recommendations import services as recommendations
from recommendations.services.ranking import _refuse_spread

LOG_LIKE = ("(needs", "% for each", ": PB", "refused:", "keeps switch locality",
            "loses switch locality", "only 0%")


def entry(policy: str, locality: bool, rel: float, broken: int = 0) -> dict:
    return {"policy": policy, "properties": {"switch_locality": locality},
            "relative_comm": rel, "broken_switches": broken, "reason": "Base."}


def test_a_refusal_says_why_and_what_would_change_it():
    entries = [entry("diagonal", True, 1.0), entry("full_spread", False, 1.0, broken=48)]
    _refuse_spread(entries, held_fraction=0.5, simulated=True)
    reason = entries[1]["reason"]
    assert "Not recommended: it would share switches while other jobs hold 50% of the " \
           "machine" in reason
    assert "would split 48 whole free switches that later jobs could use whole" in reason
    assert "worth it only if it is at least 20% faster than diagonal" in reason
    assert reason.endswith("the simulation shows it no faster.")
    assert not any(bit in reason for bit in LOG_LIKE), reason


def test_a_clear_simulated_win_is_said_in_words():
    entries = [entry("diagonal", True, 1.0), entry("full_spread", False, 0.7, broken=2)]
    _refuse_spread(entries, held_fraction=0.5, simulated=True)
    assert "refused" not in entries[1]
    assert "Recommended although it would share switches" in entries[1]["reason"]
    assert "the simulation shows it 30% faster than diagonal" in entries[1]["reason"]


@pytest.mark.django_db
def test_every_reason_of_a_ranking_is_a_sentence(users):
    hx = machines.create_machine(name="hx", sides=[8, 8], concentration=8)
    for i, policy in enumerate(["row", "diagonal", "row", "diagonal"]):
        jobs.submit_job(owner=users["operator"], machine=hx, name=f"bg{i}", node_count=64,
                        pattern="all2all", policy=policy)
    rec, _ = recommendations.request_recommendation(
        user=users["operator"], machine=hx, node_count=64, pattern="all2all", t_cmpt=100.0,
        t_comm=50.0, p_abn=0.026, alpha_abn=3.53, t_bench=0.0167, simulate=False)
    for item in [*rec.ranking, rec.recommended]:
        reason = item.get("reason")
        if reason is None:
            continue
        assert reason.startswith("Its 64 nodes") and reason.endswith("."), reason
        assert not any(bit in reason for bit in LOG_LIKE), reason
    refused = [e for e in rec.ranking if e.get("refused")]
    assert refused and all("Not recommended:" in e["reason"] for e in refused)
