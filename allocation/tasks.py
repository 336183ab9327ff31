"""Thin Celery tasks of the allocation app: ids in, one service call."""

from __future__ import annotations

from celery import shared_task

from allocation.models import Machine
from allocation.services import slurm_sync


@shared_task(name=slurm_sync.SYNC_MACHINE_TASK, bind=True, acks_late=True, soft_time_limit=600,
             time_limit=660)
def sync_machine(self, machine_id: int) -> dict:
    """One sync of one machine with Slurm (a failure is recorded on its link)."""
    machine = Machine.objects.filter(pk=machine_id).first()
    if machine is None:
        return {"status": "skipped", "error": f"no machine {machine_id}"}
    try:
        return slurm_sync.sync_machine(machine).as_dict()
    except slurm_sync.SyncFailed as exc:
        return {"machine": machine.name, "status": "failed", "error": str(exc)}


@shared_task(name=slurm_sync.SYNC_DUE_TASK, bind=True, acks_late=True, soft_time_limit=60,
             time_limit=90)
def sync_due(self) -> list[int]:
    """The beat entry: enqueue a sync of every linked machine whose interval passed."""
    due = [m.pk for m in slurm_sync.due_machines()]
    for pk in due:
        sync_machine.delay(pk)
    return due
