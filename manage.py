#!/usr/bin/env python
"""Django's command-line utility for hxportal."""

import gc
import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "hxportal.settings.local")
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)
    # The command has finished and the process is about to exit. Freezing the heap
    # spares the interpreter's shutdown its full garbage collections over every
    # object of Django, numpy and numba: 0.4 to 0.6 s of a short command such as
    # ``hx_simulate`` (README "Speed"). Reference counting still frees what it
    # frees, and atexit handlers and the flush of stdout and stderr still run; the
    # database connections, which sit in reference cycles, are closed first.
    from django.db import connections

    connections.close_all()
    gc.freeze()


if __name__ == "__main__":
    main()
