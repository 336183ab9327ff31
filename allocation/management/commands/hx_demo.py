"""``manage.py hx_demo``: seed the reference 8x8, c = 8 machine and an admin user.

The demo admin's password defaults to ``admin`` only where the settings allow
it (``HX_DEMO_DEFAULT_ADMIN``: local development, ``make run``). Elsewhere, and
so on production settings, a password must be given (``--password`` or
``HX_DEMO_ADMIN_PASSWORD``) and pass the site's password validators, because a
known superuser password on a reachable server is an open door.
"""

from __future__ import annotations

import os

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from allocation.models import Machine
from allocation.services import history, machines
from hxportal import services as accounts
from hxportal.roles import Role

DEMO_PASSWORD = "admin"  # noqa: S105 - the documented local demo password
PASSWORD_ENV = "HX_DEMO_ADMIN_PASSWORD"  # noqa: S105 - the name of a variable


class Command(BaseCommand):
    help = "Create the demo HyperX machine 'hx' (8x8 switches, 8 nodes each) and a demo admin."

    def add_arguments(self, parser):
        parser.add_argument("--name", default="hx")
        parser.add_argument("--admin", default="admin", help="Demo admin username.")
        parser.add_argument("--password", "--admin-password", dest="password", default=None,
                            help=f"Demo admin password (else ${PASSWORD_ENV}; 'admin' only "
                                 "on local development settings).")
        parser.add_argument("--history-days", type=int, default=7,
                            help="Days of synthetic job history for the board when the "
                                 "machine has none (0: none). Labelled synthetic.")
        parser.add_argument("--seed", type=int, default=1, help="Seed of that history.")

    def handle(self, *args, **options):
        password, shown = self._password(options["admin"], options["password"])
        name = options["name"]
        if Machine.objects.filter(name=name).exists():
            self.stdout.write(f"machine {name} already exists")
        else:
            machine = machines.create_machine(
                name=name, sides=[8, 8], concentration=8, hostname_pattern="",
                description="Reference HyperX: 8x8 switches, c = 8 (512 nodes)")
            self.stdout.write(f"created machine {machine.name} ({machine.node_count} nodes)")
        machine = Machine.objects.get(name=name)
        if options["history_days"] > 0 and not self._fed_by_slurm(machine):
            stored = history.seed_synthetic_week(machine, days=options["history_days"],
                                                 seed=options["seed"])
            self.stdout.write(f"recorded {stored} synthetic finished jobs on {name} "
                              f"(the last {options['history_days']} days, seed "
                              f"{options['seed']})" if stored else
                              f"{name} already has recent synthetic history")
        user, created = accounts.upsert_user(options["admin"], Role.ADMIN, password=password)
        self.stdout.write(f"{'created' if created else 'updated'} admin {user.username} "
                          f"({shown})")

    @staticmethod
    def _fed_by_slurm(machine: Machine) -> bool:
        """A machine synced from Slurm has real history: no synthetic jobs on it."""
        link = getattr(machine, "slurm_link", None) if hasattr(machine, "slurm_link") else None
        return bool(link and (link.enabled or link.last_success_at))

    @staticmethod
    def _password(username: str, given: str | None) -> tuple[str, str]:
        """(password, what to print): checked before anything is written."""
        password = given or os.environ.get(PASSWORD_ENV) or None
        if settings.HX_DEMO_DEFAULT_ADMIN:
            password = password or DEMO_PASSWORD
            return password, f"password: {password}" if password == DEMO_PASSWORD \
                else "password as given"
        if password is None:
            raise CommandError(
                f"refusing to create the demo admin with the password '{DEMO_PASSWORD}' "
                f"outside local development settings: give --password or set {PASSWORD_ENV}")
        try:
            validate_password(password, get_user_model()(username=username))
        except ValidationError as exc:
            raise CommandError("the demo admin password is too weak: "
                               + " ".join(exc.messages)) from exc
        return password, "password as given"
