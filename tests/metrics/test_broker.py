"""Celery queue lengths from the filesystem broker (``make run``) and from Redis."""

from __future__ import annotations

import uuid

import pytest
from kombu import Connection, Exchange, Queue

from metrics.services import queue_lengths
from tests.conftest import skip_or_fail

REDIS_URL = "redis://127.0.0.1:6379/3"


def publish(url: str, options: dict, queue: str, count: int, priority: int | None = None):
    with Connection(url, transport_options=options) as conn:
        producer = conn.Producer()
        target = Queue(queue, Exchange(queue, type="direct"), routing_key=queue)
        for i in range(count):
            producer.publish({"n": i}, exchange=target.exchange, routing_key=queue,
                             declare=[target], serializer="json", priority=priority)


def test_filesystem_broker_counts_the_message_files_of_each_queue(settings, tmp_path):
    folders = {"data_folder_in": str(tmp_path), "data_folder_out": str(tmp_path),
               "processed_folder": str(tmp_path / "done"),
               "control_folder": str(tmp_path / "control"), "store_processed": False}
    settings.CELERY_BROKER_URL = "filesystem://"
    settings.CELERY_BROKER_TRANSPORT_OPTIONS = folders
    # Names of their own: kombu remembers bindings per process, so a queue another test
    # bound (in another folder) would not be bound in this one.
    busy, idle, one = (f"hx-test-{uuid.uuid4().hex[:8]}-{i}" for i in range(3))
    publish("filesystem://", folders, busy, 3)
    publish("filesystem://", folders, one, 1)
    (tmp_path / "unrelated.txt").write_text("not a message")
    reading = queue_lengths((busy, idle, one))
    assert reading.reachable
    assert reading.lengths == {busy: 3, idle: 0, one: 1}


@pytest.fixture
def redis_broker(settings):
    redis = pytest.importorskip("redis")
    client = redis.Redis.from_url(REDIS_URL, socket_connect_timeout=1)
    try:
        client.ping()
    except redis.exceptions.ConnectionError:
        skip_or_fail(f"no Redis at {REDIS_URL}")
    settings.CELERY_BROKER_URL = REDIS_URL
    settings.CELERY_BROKER_TRANSPORT = None  # the zero-setup pass names its file transport
    settings.CELERY_BROKER_TRANSPORT_OPTIONS = {}
    names = [f"hx-test-{uuid.uuid4().hex[:8]}-{i}" for i in range(2)]
    yield names
    for name in names:
        client.delete(name, *(f"{name}\x06\x16{p}" for p in (3, 6, 9)))


def test_redis_broker_reads_the_list_lengths_with_their_priority_lists(redis_broker):
    busy, empty = redis_broker
    publish(REDIS_URL, {}, busy, 4)
    publish(REDIS_URL, {}, busy, 2, priority=5)  # kept in a priority list of its own
    reading = queue_lengths((busy, empty))
    assert reading.reachable and reading.lengths == {busy: 6, empty: 0}


def test_an_unreachable_broker_is_a_reading_not_an_error(settings):
    settings.CELERY_BROKER_URL = "redis://127.0.0.1:1/0"  # nothing listens on port 1
    settings.CELERY_BROKER_TRANSPORT_OPTIONS = {}
    reading = queue_lengths(("celery",))
    assert not reading.reachable and reading.lengths == {}
