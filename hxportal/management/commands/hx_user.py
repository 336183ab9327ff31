"""``manage.py hx_user NAME --role viewer|operator|admin``: create or update a user
and print a new API token for scripts."""

from __future__ import annotations

from datetime import timedelta

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from hxportal import services
from hxportal.models import TokenScope
from hxportal.roles import Role


class Command(BaseCommand):
    help = "Create or update a user with a role and print a new API token."

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--role", required=True, choices=Role.values)
        parser.add_argument("--email", default="")
        parser.add_argument("--password", default=None,
                            help="Set a password for browser sign-in.")
        parser.add_argument("--token-name", default="script")
        parser.add_argument("--scope", choices=TokenScope.values, default=TokenScope.ALL)
        parser.add_argument("--read-only", action="store_true")
        parser.add_argument("--expires-days", type=int, default=None)
        parser.add_argument("--no-token", action="store_true", help="Do not issue a token.")

    def handle(self, *args, **options):
        try:
            user, created = services.upsert_user(options["username"], options["role"],
                                                 email=options["email"],
                                                 password=options["password"])
        except ValidationError as exc:
            raise CommandError("; ".join(exc.messages)) from exc
        verb = "created" if created else "updated"
        self.stderr.write(f"{verb} user {user.username} with role {user.role}")
        if options["no_token"]:
            return
        expires = None
        if options["expires_days"] is not None:
            expires = timezone.now() + timedelta(days=options["expires_days"])
        key = services.issue_token(user, options["token_name"], scope=options["scope"],
                                   read_only=options["read_only"], expires_at=expires)
        self.stdout.write(key)
