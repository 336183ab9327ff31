"""The models that moved from allocation to health and recommendations keep their
rows, ids, content types and permission grants, forward and backward.

Runs on whichever database the suite runs on (SQLite and PostgreSQL in CI):
migrate back to the last migration before the split, write rows through the
models as they were then, migrate forward, read them through today's models,
migrate back again, and finish at the latest state.
"""

from __future__ import annotations

import pytest
from django.conf import settings
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

BEFORE_SPLIT = [("allocation", "0009_one_pattern_vocabulary")]
MOVED = {"benchmarkresult": "health", "estimate": "health", "estimationrun": "health",
         "recommendation": "recommendations", "policyprediction": "recommendations"}


def _migrate(targets):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


def _latest():
    return MigrationExecutor(connection).loader.graph.leaf_nodes()


def _seed_before_split(apps) -> dict[str, int]:
    """Rows of every moved model, written as allocation's models, plus a group grant."""
    get = apps.get_model
    user = get(*settings.AUTH_USER_MODEL.split(".")).objects.create(username="split")
    machine = get("allocation", "Machine").objects.create(
        name="m", sides=[2, 2], concentration=1, hostname_pattern="n{n}", hostlist="n[0-3]")
    node = get("allocation", "Node").objects.create(machine=machine, hostname="n0", index=0,
                                                    switch=0, coords=[0, 0], local=0)
    job = get("allocation", "Job").objects.create(owner=user, machine=machine, name="j",
                                                  node_count=1)
    now = timezone.now()
    bench = get("allocation", "BenchmarkResult").objects.create(
        machine=machine, job=job, node=node, benchmark="b", seconds=1.5)
    run = get("allocation", "EstimationRun").objects.create(machine=machine)
    estimate = get("allocation", "Estimate").objects.create(
        machine=machine, benchmark="b", window_start=now, window_end=now, runs=1,
        abnormal_runs=0, jobs=1, t_bench=1.5, p_abn=0.0, p_abn_low=0.0, p_abn_high=0.1,
        run=run)
    rec = get("allocation", "Recommendation").objects.create(
        machine=machine, user=user, node_count=1, pattern="all2all", cache_key="k",
        deadline=now, job=job)
    prediction = get("allocation", "PolicyPrediction").objects.create(
        recommendation=rec, policy="row")
    content_type = get("contenttypes", "ContentType").objects
    for model in MOVED:  # the suite's own setup may have made them already
        content_type.get_or_create(app_label="allocation", model=model)
    permission, _ = get("auth", "Permission").objects.get_or_create(
        codename="view_benchmarkresult", name="Can view benchmark result",
        content_type=content_type.get(app_label="allocation", model="benchmarkresult"))
    get("auth", "Group").objects.create(name="readers").permissions.add(permission)
    return {"benchmarkresult": bench.pk, "estimate": estimate.pk, "estimationrun": run.pk,
            "recommendation": rec.pk, "policyprediction": prediction.pk,
            "content_type": permission.content_type_id}


def _check(apps, label_of, ids):
    for model, label in label_of.items():
        rows = apps.get_model(label, model).objects
        assert list(rows.values_list("pk", flat=True)) == [ids[model]], (label, model)
    content_type = apps.get_model("contenttypes", "ContentType").objects
    moved = content_type.get(pk=ids["content_type"])
    assert (moved.app_label, moved.model) == (label_of["benchmarkresult"], "benchmarkresult")
    assert not content_type.filter(
        model__in=list(MOVED), app_label__in={"allocation", "health", "recommendations"}
        - set(label_of.values())).exists()
    group = apps.get_model("auth", "Group").objects.get(name="readers")
    assert list(group.permissions.values_list("content_type_id", flat=True)) == [
        ids["content_type"]]


@pytest.mark.django_db(transaction=True)
def test_moved_models_keep_rows_and_grants_both_ways():
    ids = _seed_before_split(_migrate(BEFORE_SPLIT))
    latest = _latest()
    after = _migrate(latest)
    _check(after, MOVED, ids)
    estimate = after.get_model("health", "Estimate").objects.get()
    assert estimate.run_id == ids["estimationrun"]  # foreign keys inside the move hold
    prediction = after.get_model("recommendations", "PolicyPrediction").objects.get()
    assert prediction.recommendation_id == ids["recommendation"]

    before = _migrate(BEFORE_SPLIT)
    _check(before, dict.fromkeys(MOVED, "allocation"), ids)

    _check(_migrate(latest), MOVED, ids)  # and forward again (the suite goes on from here)


@pytest.mark.django_db(transaction=True)
def test_a_content_type_made_under_the_new_label_gives_way_to_the_old_one():
    """After a migration back, ``migrate`` makes content types for the installed
    models under the new labels; going forward again keeps the old rows (grants)."""
    ids = _seed_before_split(_migrate(BEFORE_SPLIT))
    content_type = _migrate(BEFORE_SPLIT).get_model("contenttypes", "ContentType").objects
    for model, label in MOVED.items():
        content_type.create(app_label=label, model=model)
    _check(_migrate(_latest()), MOVED, ids)
