"""The metrics app's services: the health snapshot (its one write path) and the
reads of a scrape.

* :mod:`.snapshots` - beat's refresh of every machine's health snapshot;
* :mod:`.reads` - the database side of a scrape, as :class:`metrics.readings.Readings`;
* :mod:`.broker` - Celery queue lengths from the broker.
"""

from __future__ import annotations

from metrics.services.broker import queue_lengths
from metrics.services.reads import read_all
from metrics.services.snapshots import refresh_health_snapshots

__all__ = ["queue_lengths", "read_all", "refresh_health_snapshots"]
