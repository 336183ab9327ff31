"""``manage.py hx_allocate``: online allocation on a stored machine's current occupancy.

    python manage.py hx_allocate --machine hx --policy diagonal --size 64 [--dry-run] --json

Without ``--dry-run`` a job is created and allocated (owner ``--owner``, default the
service account ``hx-cli``), with the same locking as the API.
"""

from __future__ import annotations

import json

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from allocation.hyperx import ONLINE_POLICIES
from allocation.models import CommPattern, Machine
from allocation.pattern_fields import canonical
from allocation.services import jobs
from hxportal import services as accounts
from hxportal.errors import ConflictError, fields_renamed
from hxportal.roles import Role

CLI_ACCOUNT = "hx-cli"


class Command(BaseCommand):
    help = "Allocate (or with --dry-run preview) a job on a stored machine with a policy."

    def add_arguments(self, parser):
        parser.add_argument("--machine", required=True)
        parser.add_argument("--policy", required=True, choices=ONLINE_POLICIES)
        parser.add_argument("--size", type=int, required=True)
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--spares", type=int, default=0)
        parser.add_argument("--name", default="cli-job")
        parser.add_argument("--pattern", type=canonical, default=CommPattern.UNKNOWN,
                            choices=CommPattern.values,
                            help="communication pattern (all-to-all and the other "
                                 "hyphenated names are read as aliases)")
        parser.add_argument("--owner", default=None, help=f"username (default {CLI_ACCOUNT})")
        parser.add_argument("--dry-run", action="store_true")
        parser.add_argument("--json", action="store_true")

    def handle(self, *args, **options):
        machine = Machine.objects.filter(name=options["machine"]).first()
        if machine is None:
            raise CommandError(f"no machine named {options['machine']!r}")
        try:
            with fields_renamed({"node_count": "size"}):  # the flag is --size
                if options["dry_run"]:
                    result = self._preview(machine, options)
                else:
                    result = self._allocate(machine, options)
        except ValidationError as exc:
            raise CommandError("; ".join(f"{k}: {' '.join(v)}" for k, v in
                                         exc.message_dict.items())) from exc
        except ConflictError as exc:
            raise CommandError(exc.message) from exc
        if options["json"]:
            self.stdout.write(json.dumps(result))
        else:
            props = result["properties"]
            self.stdout.write(f"{result['policy']}: {result['hostlist']}"
                              + (f" (job {result['job']})" if result["job"] else " (dry run)"))
            self.stdout.write(", ".join(f"{k}={v}" for k, v in props.items()))

    def _preview(self, machine: Machine, options) -> dict:
        candidate = jobs.propose(machine, options["policy"], options["size"] + options["spares"],
                                 options["seed"])
        if candidate.error:
            raise CommandError(candidate.error)
        return {"machine": machine.name, "dry_run": True, "job": None, **candidate.as_dict()}

    def _allocate(self, machine: Machine, options) -> dict:
        username = options["owner"] or CLI_ACCOUNT
        user = get_user_model().objects.filter(username=username).first()
        if user is None:
            if options["owner"]:
                raise CommandError(f"no user named {username!r}")
            user, _ = accounts.upsert_user(CLI_ACCOUNT, Role.OPERATOR)
        job = jobs.submit_job(owner=user, machine=machine, name=options["name"],
                              node_count=options["size"], pattern=options["pattern"],
                              policy=options["policy"], seed=options["seed"],
                              spares=options["spares"])
        lists = jobs.job_hostlists(job)
        return {"machine": machine.name, "dry_run": False, "job": job.pk,
                "policy": job.policy, "seed": job.seed, "size": job.node_count,
                "hostlist": lists["primary"], "spares_hostlist": lists["spare"],
                "properties": job.properties, "error": None}
