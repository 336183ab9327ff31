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
from functools import cached_property
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


class WholeMessageTransport(filesystem.Transport):
    """kombu's filesystem transport with :class:`WholeMessageChannel`."""

    Channel = WholeMessageChannel
