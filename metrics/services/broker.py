"""Celery queue lengths, read from the broker through kombu.

kombu's own queue size is what Celery's workers see: on Redis the length (LLEN) of
the queue's list and of its priority lists, on the filesystem transport (``make
run``) the message files named for the queue, on AMQP the broker's count. A queue
the broker does not know (Redis drops an empty list) holds nothing.
"""

from __future__ import annotations

import logging

from django.conf import settings
from kombu import Connection

from metrics.constants import BROKER_TIMEOUT
from metrics.readings import QueueReading

logger = logging.getLogger(__name__)


def _connection() -> Connection:
    options = {**getattr(settings, "CELERY_BROKER_TRANSPORT_OPTIONS", {}),
               "socket_timeout": BROKER_TIMEOUT, "socket_connect_timeout": BROKER_TIMEOUT,
               "max_retries": 0}
    return Connection(settings.CELERY_BROKER_URL, transport_options=options,
                      transport=getattr(settings, "CELERY_BROKER_TRANSPORT", None),
                      connect_timeout=BROKER_TIMEOUT)


def _length(conn: Connection, queue: str) -> int:
    channel = conn.channel()
    try:
        return int(channel.queue_declare(queue=queue, passive=True).message_count)
    except conn.channel_errors:
        return 0  # not declared, or (Redis) empty: no message waits
    finally:
        try:
            channel.close()
        except conn.connection_errors + conn.channel_errors:
            pass


def queue_lengths(queues: tuple[str, ...] | None = None) -> QueueReading:
    """Messages waiting in each of ``queues`` (default: the portal's three); an
    unreachable broker is a reading with ``reachable`` False, not an error."""
    names = tuple(settings.HX_QUEUES if queues is None else queues)
    try:
        with _connection() as conn:
            conn.ensure_connection(max_retries=0, timeout=BROKER_TIMEOUT)
            return QueueReading(reachable=True,
                                lengths={name: _length(conn, name) for name in names})
    except Exception as exc:  # noqa: BLE001 - any broker failure is "unreachable"
        logger.warning("metrics: Celery broker unreachable: %s", exc)
        return QueueReading(reachable=False)
