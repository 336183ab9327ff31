#!/usr/bin/env python
"""Django's command-line utility for hxportal."""

import gc
import os
import sys


def main() -> None:
    # Django's set-up creates some 100,000 objects that live as long as the process
    # (models, URL patterns, numba's typing tables); at the default threshold of 700
    # allocations the young generation is collected about 400 times on the way, 0.19 s
    # of a short command such as ``hx_simulate`` for nothing freed. Collecting every
    # 20,000 allocations instead ran it 0.96-0.97x the wall time (docs/speed.md).
    gc.set_threshold(20_000)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "hxportal.settings.local")
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)
    # The command has finished and the process is about to exit. Freezing the heap
    # spares the interpreter's shutdown its full garbage collections over every
    # object of Django, numpy and numba: 0.4 to 0.6 s of a short command such as
    # ``hx_simulate`` (docs/speed.md). Reference counting still frees what it
    # frees, and atexit handlers and the flush of stdout and stderr still run; the
    # database connections, which sit in reference cycles, are closed first.
    from django.db import connections

    connections.close_all()
    gc.freeze()


if __name__ == "__main__":
    main()
