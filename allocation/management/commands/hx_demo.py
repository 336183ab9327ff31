"""``manage.py hx_demo``: seed the reference 8x8, c = 8 machine and an admin user."""

from __future__ import annotations

from django.core.management.base import BaseCommand

from allocation.models import Machine
from allocation.services import machines
from hxportal import services as accounts
from hxportal.roles import Role


class Command(BaseCommand):
    help = "Create the demo HyperX machine 'hx' (8x8 switches, 8 nodes each) and a demo admin."

    def add_arguments(self, parser):
        parser.add_argument("--name", default="hx")
        parser.add_argument("--admin", default="admin", help="Demo admin username.")
        parser.add_argument("--password", default="admin",
                            help="Demo admin password (change it for anything real).")

    def handle(self, *args, **options):
        name = options["name"]
        if Machine.objects.filter(name=name).exists():
            self.stdout.write(f"machine {name} already exists")
        else:
            machine = machines.create_machine(
                name=name, sides=[8, 8], concentration=8, hostname_pattern="",
                description="Reference HyperX: 8x8 switches, c = 8 (512 nodes)")
            self.stdout.write(f"created machine {machine.name} ({machine.node_count} nodes)")
        user, created = accounts.upsert_user(options["admin"], Role.ADMIN,
                                             password=options["password"])
        self.stdout.write(f"{'created' if created else 'updated'} admin {user.username} "
                          f"(password: {options['password']})")
