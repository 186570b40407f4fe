"""A misbehaving HTTP server on loopback, for faults a well-behaved ASGI app cannot produce.

Raw sockets, one thread per connection. It reads one request and then, by ``mode``:

``drip``      a 200 with a valid completion, sent one byte every ``interval`` seconds
``truncate``  a 200 whose Content-Length promises the full body; half is sent, then the socket closes
``stall``     a 200 with half of the body, then nothing until the server stops
``headers``   the status line and headers only, then nothing (a stalled response before the body)
``reset``     the connection is closed without a byte of response
``garbage``   bytes that are not HTTP, then close
``sse_cut``   a text/event-stream with the first half of the answer's chunks and no ``[DONE]``

The body is a chat completion whose content is ``content``, so a test can assert that this text (or
any part of it) never reaches the gateway's client.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

MODES = ("drip", "truncate", "stall", "headers", "reset", "garbage", "sse_cut")


def completion_body(content: str) -> bytes:
    return json.dumps(
        {
            "id": "chatcmpl-fault",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": "m",
            "choices": [
                {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}
            ],
        }
    ).encode()


def _sse_chunks(content: str) -> list[bytes]:
    words = content.split(" ")
    return [
        b"data: "
        + json.dumps(
            {
                "id": "chatcmpl-fault",
                "object": "chat.completion.chunk",
                "created": 0,
                "model": "m",
                "choices": [{"index": 0, "delta": {"content": w + " "}, "finish_reason": None}],
            }
        ).encode()
        + b"\n\n"
        for w in words
    ]


@dataclass
class FaultServer:
    mode: str
    content: str
    interval: float = 0.2
    connections: int = 0
    normal_first: int = 0
    """The first this many connections get ``normal_content`` at once (e.g. a draft before a faulty
    rewrite call)."""
    normal_content: str = ""
    _stop: threading.Event = field(default_factory=threading.Event)

    def handle(self, conn: socket.socket) -> None:
        with conn:
            conn.settimeout(30)
            try:
                self._read_request(conn)
                self.connections += 1
                self._respond(conn)
            except OSError:
                return

    def _read_request(self, conn: socket.socket) -> None:
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = conn.recv(65536)
            if not chunk:
                return
            data += chunk
        head, _, rest = data.partition(b"\r\n\r\n")
        length = 0
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value.strip())
        while len(rest) < length:
            chunk = conn.recv(65536)
            if not chunk:
                return
            rest += chunk

    def _respond(self, conn: socket.socket) -> None:
        if self.connections <= self.normal_first:
            normal = completion_body(self.normal_content)
            conn.sendall(
                b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
                + f"content-length: {len(normal)}\r\nconnection: close\r\n\r\n".encode()
                + normal
            )
            return
        body = completion_body(self.content)
        head = (
            b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
            + f"content-length: {len(body)}\r\n".encode()
            + b"connection: close\r\n\r\n"
        )
        half = body[: len(body) // 2]
        if self.mode == "reset":
            return
        if self.mode == "garbage":
            conn.sendall(b"\x00\xffNOT HTTP AT ALL " + self.content.encode() + b"\r\n\r\n")
            return
        if self.mode == "headers":
            conn.sendall(head)
            self._stop.wait()
            return
        if self.mode == "truncate":
            conn.sendall(head + half)
            return
        if self.mode == "stall":
            conn.sendall(head + half)
            self._stop.wait()
            return
        if self.mode == "drip":
            conn.sendall(head)
            for byte in body:
                if self._stop.wait(self.interval):
                    return
                conn.sendall(bytes([byte]))
            return
        if self.mode == "sse_cut":
            conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n")
            chunks = _sse_chunks(self.content)
            for chunk in chunks[: len(chunks) // 2]:
                conn.sendall(chunk)
            return
        raise ValueError(f"unknown mode {self.mode!r}")

    def stop(self) -> None:
        self._stop.set()

    @property
    def stopped(self) -> bool:
        """``stop`` was called: the accept loop ends."""
        return self._stop.is_set()


@contextmanager
def running_fault_server(
    mode: str, content: str, interval: float = 0.2, normal_first: int = 0, normal_content: str = ""
) -> Iterator[tuple[FaultServer, str]]:
    """Serve ``mode`` on 127.0.0.1; yields the server and its OpenAI base URL (``.../v1``)."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}")
    server = FaultServer(mode, content, interval, normal_first=normal_first, normal_content=normal_content)
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    listener.settimeout(0.1)
    port = listener.getsockname()[1]

    def accept_loop() -> None:
        while not server.stopped:
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            threading.Thread(target=server.handle, args=(conn,), daemon=True).start()

    thread = threading.Thread(target=accept_loop, daemon=True)
    thread.start()
    try:
        yield server, f"http://127.0.0.1:{port}/v1"
    finally:
        server.stop()
        thread.join(timeout=5)
        listener.close()
