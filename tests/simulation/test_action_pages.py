"""Cancelling and deleting simulation runs and sweeps from their pages."""

from __future__ import annotations

import pytest

from simulation import services
from simulation.models import SimulationRun, Sweep
from tests.simulation.conftest import TINY, run_pending

pytestmark = pytest.mark.django_db


def test_cancel_then_delete_a_run(client_for, users):
    run = services.start_run(dict(TINY), user=users["operator"])
    page = client_for("operator").get(f"/simulation/runs/{run.pk}/").content.decode()
    assert 'data-testid="cancel-run"' in page and 'data-testid="delete-run"' not in page
    assert 'data-testid="run-actions"' not in client_for("operator2").get(
        f"/simulation/runs/{run.pk}/").content.decode(), "only the owner (or an admin) acts"
    assert client_for("operator2").post(f"/simulation/runs/{run.pk}/cancel/").status_code == 404
    assert client_for("viewer").post(f"/simulation/runs/{run.pk}/cancel/").status_code == 403
    response = client_for("operator").post(f"/simulation/runs/{run.pk}/cancel/", follow=True)
    assert f"Simulation {run.pk} cancelled." in response.content.decode()
    run.refresh_from_db()
    assert run.status == "cancelled"
    again = client_for("operator").post(f"/simulation/runs/{run.pk}/cancel/", follow=True)
    assert "already cancelled" in again.content.decode()
    confirm = client_for("operator").get(f"/simulation/runs/{run.pk}/?delete=1").content.decode()
    assert 'data-testid="confirm-delete"' in confirm and 'data-testid="confirm-delete-button"' \
        in confirm and f'action="/simulation/runs/{run.pk}/delete/"' in confirm
    response = client_for("operator").post(f"/simulation/runs/{run.pk}/delete/", follow=True)
    assert response.redirect_chain[-1][0] == "/simulation/"
    assert f"Simulation {run.pk} deleted." in response.content.decode()
    assert not SimulationRun.objects.filter(pk=run.pk).exists()


def test_a_running_run_cannot_be_deleted(client_for, users):
    run = services.start_run(dict(TINY), user=users["operator"])
    confirm = client_for("operator").get(f"/simulation/runs/{run.pk}/?delete=1").content.decode()
    assert 'data-testid="delete-blocked"' in confirm and "cancel it first" in confirm
    response = client_for("operator").post(f"/simulation/runs/{run.pk}/delete/", follow=True)
    assert "cancel it first" in response.content.decode()
    assert SimulationRun.objects.filter(pk=run.pk).exists()


def test_cancel_then_delete_a_sweep(client_for, users):
    sweep = services.create_sweep(name="s", base=dict(TINY), parameters={"seed": [1, 2]},
                                  user=users["operator"])
    page = client_for("operator").get(f"/simulation/sweeps/{sweep.pk}/").content.decode()
    assert 'data-testid="cancel-sweep"' in page
    response = client_for("operator").post(f"/simulation/sweeps/{sweep.pk}/cancel/", follow=True)
    assert "2 unfinished runs cancelled" in response.content.decode()
    assert set(sweep.runs.values_list("status", flat=True)) == {"cancelled"}
    page = client_for("operator").get(f"/simulation/sweeps/{sweep.pk}/?delete=1").content.decode()
    assert 'data-testid="confirm-delete-button"' in page
    assert client_for("operator2").post(f"/simulation/sweeps/{sweep.pk}/delete/"
                                        ).status_code == 404
    response = client_for("operator").post(f"/simulation/sweeps/{sweep.pk}/delete/", follow=True)
    assert f"Sweep {sweep.pk} and its runs deleted." in response.content.decode()
    assert not Sweep.objects.filter(pk=sweep.pk).exists()
    assert not SimulationRun.objects.filter(sweep_id=sweep.pk).exists()


def test_a_finished_sweep_offers_delete_and_admins_may_act(client_for, users):
    sweep = services.create_sweep(name="s", base=dict(TINY), parameters={"seed": [1]},
                                  user=users["operator"])
    run_pending(sweep.runs.all())
    page = client_for("admin").get(f"/simulation/sweeps/{sweep.pk}/").content.decode()
    assert 'data-testid="delete-sweep"' in page and 'data-testid="cancel-sweep"' not in page
    response = client_for("admin").post(f"/simulation/sweeps/{sweep.pk}/cancel/", follow=True)
    assert "no unfinished runs" in response.content.decode()
    assert client_for("admin").post(f"/simulation/sweeps/{sweep.pk}/delete/").status_code == 302
    assert not Sweep.objects.filter(pk=sweep.pk).exists()
