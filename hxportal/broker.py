"""The zero-setup broker: kombu's filesystem transport, whole messages only.

kombu writes a message in place (create the file, lock it, serialise, write); the
lock is advisory and consumers never take it, so a worker listing the folder
between create and write moves an empty file, fails to decode it and stops with
"Unrecoverable error" (seen in CI on 2026-12-03: the message was lost and the
worker gone). Here a message is serialised first, written under a name no
consumer matches and renamed into place, and a consumer claims a message by
renaming it into the processed folder beside the queue: both renames are atomic
on one filesystem, so a consumer sees a whole message or none, and two consumers
never both take one (kombu's move to the system temporary folder copies across
filesystems, which lets two take the same message).

An exchange's bindings (which queues a message sent to it goes to) live in one
small file per exchange in the control folder. kombu rewrites that file in place
and truncates it before it takes its lock, so a worker binding at the same moment
as another could read an empty or half-overwritten table and stop on a
JSONDecodeError (``make run``'s two workers start together and both bind the
remote-control exchange: the likely cause of a worker that ended at start in CI
on 2026-12-07), and a corrupt table failed every later send to the exchange.
Here the table is rewritten under a lock file that is never replaced, into a new
file renamed over the old one, so a reader always sees a whole table
and no writer loses another's binding.

Consumers take messages in the order of their names. A name starts with the
message's priority (0 first, as on Redis) and the wall-clock time in zero-padded
nanoseconds: kombu's names start with unpadded milliseconds of the monotonic
clock, which sort wrongly when the count gains a digit and start again at a
reboot, while the folder keeps its messages across one. Names of kombu's form
(digits first) sort before these, so messages queued before an upgrade go first.
"""

from __future__ import annotations

import logging
import os
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cached_property
from pathlib import Path
from queue import Empty

from kombu.exceptions import ChannelError
from kombu.transport import filesystem
from kombu.utils.encoding import bytes_to_str, str_to_bytes
from kombu.utils.json import dumps, loads

logger = logging.getLogger(__name__)

#: A half-written message this old lost its writer (a process killed mid-write):
#: a write takes milliseconds, so ten minutes leaves no doubt.
ABANDONED_AFTER_SECONDS = 600
PARTIAL_SUFFIX = ".partial"


def message_name(queue: str, priority: int) -> str:
    """A message file's name: priority, then time, so sorting the names is the order."""
    return f"p{priority}-{time.time_ns():020d}-{uuid.uuid4()}.{queue}.msg"


class WholeMessageChannel(filesystem.Channel):
    """A filesystem channel whose message files appear complete or not at all."""

    def _put(self, queue: str, payload: dict, **kwargs) -> None:
        body = str_to_bytes(dumps(payload))
        name = message_name(queue, self._get_message_priority(payload))
        # A leading dot: kombu takes a file as a message of ``queue`` only when the
        # text after its first dot is ``<queue>.msg``, so no consumer, size or purge
        # ever counts the half-written file.
        partial = os.path.join(self.data_folder_out, f".{uuid.uuid4()}{PARTIAL_SUFFIX}")
        try:
            with open(partial, "wb") as handle:
                handle.write(body)
            os.replace(partial, os.path.join(self.data_folder_out, name))
        except OSError as exc:
            try:
                os.remove(partial)
            except OSError:
                pass
            raise ChannelError(f"Cannot add message {name!r} to the broker folder") from exc

    @cached_property
    def claim_folder(self) -> str:
        """Where a consumer moves the message it takes: the processed folder, which
        settings keep beside the queue folder, so the move is one rename."""
        os.makedirs(self.processed_folder, exist_ok=True)
        return self.processed_folder

    def _get(self, queue: str) -> dict:
        suffix = f"{queue}.msg"
        for name in sorted(os.listdir(self.data_folder_in)):
            if name.endswith(PARTIAL_SUFFIX):
                self._remove_if_abandoned(name)
                continue
            if name.partition(".")[2] != suffix:
                continue
            claimed = os.path.join(self.claim_folder, name)
            try:
                os.rename(os.path.join(self.data_folder_in, name), claimed)
            except FileNotFoundError:
                continue  # another consumer took it first
            try:
                with open(claimed, "rb") as handle:
                    payload = loads(bytes_to_str(handle.read()))
            except ValueError:
                # Not a message (one that kombu's own transport left half-written
                # before an upgrade, say): kept aside for a look, never retried, and
                # the worker goes on instead of stopping on it.
                os.replace(claimed, f"{claimed}.unreadable")
                logger.error("broker: message file %s is not JSON; kept as %s.unreadable",
                             name, claimed)
                continue
            except OSError as exc:
                raise ChannelError(f"Cannot read message {claimed!r}") from exc
            if not self.store_processed:
                os.remove(claimed)
            return payload
        raise Empty()

    def _remove_if_abandoned(self, name: str) -> None:
        path = os.path.join(self.data_folder_in, name)
        try:
            if time.time() - os.stat(path).st_mtime > ABANDONED_AFTER_SECONDS:
                os.remove(path)
                logger.warning("broker: removed %s, abandoned by a writer that died", name)
        except FileNotFoundError:
            pass  # renamed into place, or removed by another consumer

    def get_table(self, exchange: str) -> list:
        """The exchange's bindings; no lock needed, since a table file is only ever
        replaced whole."""
        file = self._exchange_file(exchange)
        table = self._read_table(file)
        if table is None:
            raise ChannelError(f"The binding table {file} is not JSON; binding a queue "
                               "to the exchange again sets it aside and starts a new one")
        return [filesystem.exchange_queue_t(*binding) for binding in table]

    def _queue_bind(self, exchange: str, routing_key: str, pattern: str,
                    queue: str) -> None:
        binding = filesystem.exchange_queue_t(routing_key or "", pattern or "", queue or "")
        with self._locked_table(exchange) as (file, bindings):
            if binding not in bindings:
                self._write_table(file, [binding, *bindings])

    def _delete(self, queue: str, exchange: str, routing_key: str, pattern: str,
                *args, **kwargs) -> None:
        """Empty the queue and take its binding out of the exchange's table."""
        self._purge(queue)
        binding = filesystem.exchange_queue_t(routing_key or "", pattern or "", queue or "")
        with self._locked_table(exchange) as (file, bindings):
            if binding in bindings:
                self._write_table(file, [b for b in bindings if b != binding])

    @contextmanager
    def _locked_table(self, exchange: str) -> Iterator[tuple[Path, list]]:
        """The exchange's table file and bindings, held under its lock file, so that
        read, change and write are one step for every process binding at once."""
        file = self._exchange_file(exchange)
        self.control_folder.mkdir(parents=True, exist_ok=True)
        try:
            with open(file.with_name(f".{file.name}.lock"), "a") as lock_file:
                filesystem.lock(lock_file, filesystem.LOCK_EX)
                try:
                    table = self._read_table(file)
                    if table is None:
                        os.replace(file, f"{file}.unreadable")
                        logger.error("broker: binding table %s is not JSON; kept as "
                                     "%s.unreadable and started again", file, file)
                        table = []
                    yield file, [filesystem.exchange_queue_t(*b) for b in table]
                finally:
                    filesystem.unlock(lock_file)
        except OSError as exc:
            raise ChannelError(f"Cannot update the binding table {file}") from exc

    @staticmethod
    def _read_table(file: Path) -> list | None:
        """The table's JSON, ``[]`` when there is no file, ``None`` when it is not
        JSON (what kombu's own transport could leave)."""
        try:
            text = file.read_bytes()
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise ChannelError(f"Cannot read the binding table {file}") from exc
        try:
            return loads(bytes_to_str(text))
        except ValueError:
            return None

    @staticmethod
    def _write_table(file: Path, bindings: list) -> None:
        """Write the table beside the old one and rename it into place: atomic, so a
        reader never sees it half-written (a process killed between the two leaves
        a small ``.partial`` file in the control folder, never read)."""
        partial = file.with_name(f".{uuid.uuid4()}{PARTIAL_SUFFIX}")
        try:
            partial.write_bytes(str_to_bytes(dumps(bindings)))
            os.replace(partial, file)
        finally:
            partial.unlink(missing_ok=True)


class WholeMessageTransport(filesystem.Transport):
    """kombu's filesystem transport with :class:`WholeMessageChannel`."""

    Channel = WholeMessageChannel
