"""A recommendation asks once: one occupancy read, one spare model read, the
simulated partition is the accepted one, and predictions go through the
simulation store (a repeated configuration is read, not simulated again)."""

from __future__ import annotations

import pytest
from django.conf import settings as django_settings

from allocation.models import Allocation, Job
from allocation.services import jobs, machines
from health.services import estimation
from hxportal import hostlists
from recommendations import services as recommendations
from recommendations.models import PolicyPrediction, Recommendation
from simulation import services as simulation
from simulation.models import RunOrigin, SimulationRun
from simulation.services import runs as simulation_runs
from simulation.services.runs import stored_partitions

pytestmark = pytest.mark.django_db


@pytest.fixture
def small(users, monkeypatch):
    """A 4x4, c = 4 machine with a quarter held by two jobs; one seed per prediction."""
    monkeypatch.setattr(django_settings, "HX_PREDICTION_SEEDS", 1)
    machine = machines.create_machine(name="small", sides=[4, 4], concentration=4)
    for i, policy in enumerate(["row", "diagonal"]):
        jobs.submit_job(owner=users["admin"], machine=machine, name=f"bg{i}", node_count=8,
                        pattern="all-to-all", policy=policy)
    return machine


def ask(users, machine, **extra) -> Recommendation:
    question = {"node_count": 16, "pattern": "all-to-all", "t_cmpt": 100.0, "t_comm": 50.0,
                "p_abn": 0.02, "alpha_abn": 3.0, "t_bench": 0.5, **extra}
    rec, _ = recommendations.request_recommendation(user=users["operator"], machine=machine,
                                                    **question)
    return rec


def simulate_all(rec: Recommendation) -> Recommendation:
    for prediction in PolicyPrediction.objects.filter(recommendation=rec):
        recommendations.run_prediction(prediction.pk)
    return Recommendation.objects.get(pk=rec.pk)


def counting(monkeypatch, module, name: str) -> list:
    calls = []
    original = getattr(module, name)

    def wrapped(*args, **kwargs):
        calls.append(args)
        return original(*args, **kwargs)

    monkeypatch.setattr(module, name, wrapped)
    return calls


def endpoints(job: Job, role: str) -> list[int]:
    return list(Allocation.objects.filter(job=job, role=role).order_by("rank")
                .values_list("node__index", flat=True))


def take(users, machine, index: int) -> None:
    """Another job takes node ``index`` (a portal allocation made meanwhile)."""
    node = machine.nodes.get(index=index)
    job = jobs.create_job(owner=users["admin"], machine=machine, name="meanwhile",
                          node_count=1, pattern="uniform")
    jobs.allocate_candidate(job, jobs.Candidate(policy="row", seed=0, endpoints=(index,),
                                                hostnames=(node.hostname,)))


def test_a_request_reads_the_occupancy_and_the_spare_model_once(users, small, monkeypatch):
    occupancy = counting(monkeypatch, jobs, "occupancy")
    latest = counting(monkeypatch, estimation, "latest_estimate")
    rec = ask(users, small)
    assert len(occupancy) == 1 and len(latest) <= 1
    simulate_all(rec)  # the ranking by simulation reads neither the live machine again
    assert len(occupancy) == 1 and len(latest) <= 1


def test_a_recommendations_simulated_partition_is_the_one_accepted(users, small):
    rec = simulate_all(ask(users, small))
    assert rec.status == "ready" and rec.method == "simulation", rec.note
    policy = rec.recommended["policy"]
    simulated = SimulationRun.objects.get(origin=RunOrigin.PREDICTION, config__policy=policy)
    partition = stored_partitions(simulated.parameters)[0].tolist()
    candidate = next(c for c in rec.inputs["candidates"] if c["policy"] == policy)
    assert partition == candidate["endpoints"][: len(partition)]
    # Other jobs start meanwhile, elsewhere: the accept still gets exactly what was ranked.
    spares = [n.index for n in machines.resolve_hostlist(
        small, rec.recommended["spares_hostlist"])] if rec.recommended["n_spare"] else []
    ranked = set(candidate["endpoints"]) | set(spares)
    free, _ = jobs.occupancy(small)
    take(users, small, next(i for i in range(free.size) if free[i] and i not in ranked))
    job = recommendations.accept(rec, users["operator"])
    assert endpoints(job, "primary") == candidate["endpoints"] == partition
    assert endpoints(job, "spare") == spares
    hostnames = dict(small.nodes.values_list("index", "hostname"))
    assert rec.recommended["hostlist"] == hostlists.compress(
        hostnames[i] for i in partition), "what the answer names is what was simulated"
    assert "proposed anew" not in Recommendation.objects.get(pk=rec.pk).note


def test_a_taken_spare_is_chosen_again_around_the_simulated_primaries(users, small):
    rec = ask(users, small, simulate=False)
    entry = next(e for e in rec.ranking if e.get("n_spare"))
    candidate = next(c for c in rec.inputs["candidates"] if c["policy"] == entry["policy"])
    spare = machines.resolve_hostlist(small, entry["spares_hostlist"])[0].index
    take(users, small, spare)
    job = recommendations.accept(rec, users["operator"], policy=entry["policy"])
    assert endpoints(job, "primary") == candidate["endpoints"]
    assert spare not in endpoints(job, "spare")
    assert len(endpoints(job, "spare")) == entry["n_spare"]


def test_a_taken_primary_is_said_when_the_accept_proposes_anew(users, small):
    rec = ask(users, small, simulate=False)
    policy = rec.recommended["policy"]
    candidate = next(c for c in rec.inputs["candidates"] if c["policy"] == policy)
    take(users, small, candidate["endpoints"][0])
    job = recommendations.accept(rec, users["operator"])
    assert candidate["endpoints"][0] not in endpoints(job, "primary")
    note = Recommendation.objects.get(pk=rec.pk).note
    assert "proposed anew" in note and "ranked (and simulated) nodes were taken" in note


def test_a_repeated_configuration_is_served_from_stored_results(users, small, monkeypatch):
    first = simulate_all(ask(users, small))
    stored = SimulationRun.objects.filter(origin=RunOrigin.PREDICTION)
    assert stored.count() == len(first.inputs["candidates"]) - sum(
        bool(c["error"]) for c in first.inputs["candidates"])

    def no_engine(*args, **kwargs):
        raise AssertionError("a stored configuration was simulated again")

    monkeypatch.setattr(simulation_runs, "simulate", no_engine)
    # Another question on the same machine (other times: not the same answer) asks the
    # same simulations: every one is read from the store.
    second = simulate_all(ask(users, small, t_cmpt=300.0))
    assert second.pk != first.pk and second.shared_from_id is None
    assert second.method == "simulation", second.note
    cycles = {e["policy"]: e["predicted_cycles"] for e in first.ranking if "error" not in e}
    assert {e["policy"]: e["predicted_cycles"] for e in second.ranking
            if "error" not in e} == cycles
    assert SimulationRun.objects.filter(origin=RunOrigin.PREDICTION).count() == stored.count()
    assert all("read from a stored result" in " ".join(p.log)
               for p in PolicyPrediction.objects.filter(recommendation=second))


def test_submitted_runs_and_calibrations_share_the_store(users, monkeypatch):
    config = {"sides": [4, 4], "concentration": 4, "ranks": 16, "pattern": "all2all",
              "max_cycles": 200_000, "message_packets": 2}
    run = simulation.start_run(config, user=users["operator"])
    simulation.execute_run(run.pk)
    run.refresh_from_db()
    assert run.status == "succeeded" and run.origin == RunOrigin.SUBMITTED
    monkeypatch.setattr(simulation_runs, "simulate", None)  # the engine must not be called
    result, reused = simulation.stored_result(simulation.parse_config(config), None,
                                              origin=RunOrigin.CALIBRATION)
    assert reused and result["cycles"] == run.result["cycles"]


def test_the_runs_page_and_api_list_submitted_runs(users, small, client_for, api):
    simulate_all(ask(users, small))
    submitted = simulation.start_run({"ranks": 4, "max_cycles": 2000}, user=users["operator"])
    predictions = SimulationRun.objects.filter(origin=RunOrigin.PREDICTION)
    assert predictions.exists()
    page = client_for("viewer")
    listed = page.get("/simulation/").context["runs"]
    assert [r.pk for r in listed] == [submitted.pk]
    every = {r.pk for r in page.get("/simulation/?origin=").context["runs"]}
    assert every == {submitted.pk, *predictions.values_list("pk", flat=True)}
    assert {r.pk for r in page.get("/simulation/?origin=prediction").context["runs"]} == set(
        predictions.values_list("pk", flat=True))
    body = api("viewer").get("/api/v1/simulation-runs/").json()
    assert [r["id"] for r in body["results"]] == [submitted.pk]
    detail = api("viewer").get(f"/api/v1/simulation-runs/{predictions.first().pk}/")
    assert detail.status_code == 200
