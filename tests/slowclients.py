"""Slow HTTP clients for the deployment tests: connections that trickle their headers.

A "slowloris" client opens a connection, sends the start of a request and then
one more header byte every ``interval`` seconds, never finishing the headers.
A server that hands each connection to a worker before its headers are complete
(gunicorn's sync workers, gthread's threads once the first byte arrived) loses
that worker for as long as the client keeps trickling; ``tests.servers.probe``
then times one ordinary request against the same server.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field

START = b"GET /login/ HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "


@dataclass
class SlowClients:
    """``count`` trickling connections to ``host:port``; counts what they did.

    A connection the server closes is opened again, as an attacker would, so the
    pressure stays at ``count`` connections (``reopened`` says how often).
    """

    port: int
    count: int
    host: str = "127.0.0.1"
    opened: int = 0
    reopened: int = 0
    bytes_sent: int = 0
    socks: list[socket.socket | None] = field(default_factory=list)

    def open(self, i: int) -> None:
        try:
            sock = socket.create_connection((self.host, self.port), timeout=2)
            sock.sendall(START)
        except OSError:
            self.socks[i] = None
            return
        self.socks[i] = sock
        self.opened += 1

    def tick(self) -> None:
        """One more header byte on every connection; reopen the ones the server closed."""
        for i, sock in enumerate(self.socks):
            if sock is None:
                self.reopened += 1
                self.open(i)
                continue
            try:
                sock.sendall(b"a")
                self.bytes_sent += 1
            except OSError:
                sock.close()
                self.socks[i] = None

    def close(self) -> None:
        for sock in self.socks:
            if sock is not None:
                with suppress(OSError):
                    sock.close()


@contextmanager
def trickling_clients(port: int, count: int, interval: float = 0.5,
                      host: str = "127.0.0.1") -> Iterator[SlowClients]:
    """Keep ``count`` connections trickling headers until the block ends."""
    clients = SlowClients(port, count, host, socks=[None] * count)
    for i in range(count):
        clients.open(i)
    stop = threading.Event()

    def trickle() -> None:
        while not stop.wait(interval):
            clients.tick()

    thread = threading.Thread(target=trickle, name="slow-clients", daemon=True)
    thread.start()
    try:
        yield clients
    finally:
        stop.set()
        thread.join(timeout=5)
        clients.close()
