"""A raw Kafka-protocol client over a plain socket, for tests that need exact requests."""

from __future__ import annotations

import socket
import struct
from typing import Any

from kafkito.protocol.codec import RESPONSES, build_request


class WireClient:
    def __init__(self, bootstrap: str, client_id: str = "wire-test", timeout: float = 10.0) -> None:
        host, port = bootstrap.rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)), timeout=timeout)
        self.client_id = client_id
        self._correlation = 0

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> WireClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def send_raw(self, data: bytes) -> None:
        self.sock.sendall(data)

    def send(self, api_key: int, version: int, **fields: Any) -> int:
        """Send a request built from `fields` (nested structs may be dicts); returns its correlation id."""
        self._correlation += 1
        request = build_request(api_key, version, **fields)
        request.with_header(correlation_id=self._correlation, client_id=self.client_id)
        self.sock.sendall(bytes(request.encode(header=True, framed=True)))
        return self._correlation

    def recv_frame(self) -> bytes | None:
        """The next response frame (without size), or None when the server closed the connection."""
        size_bytes = self._read_exact(4)
        if size_bytes is None:
            return None
        (size,) = struct.unpack(">i", size_bytes)
        return self._read_exact(size)

    def recv(self, api_key: int, version: int) -> Any:
        frame = self.recv_frame()
        if frame is None:
            raise ConnectionError("connection closed by the broker")
        return RESPONSES[api_key].decode(frame, version=version, header=True)

    def request(self, api_key: int, version: int, **fields: Any) -> Any:
        corr = self.send(api_key, version, **fields)
        response = self.recv(api_key, version)
        assert response.header.correlation_id == corr
        return response

    def is_closed_by_peer(self) -> bool:
        try:
            return self.sock.recv(1) == b""
        except ConnectionResetError:
            return True

    def _read_exact(self, n: int) -> bytes | None:
        buf = bytearray()
        while len(buf) < n:
            try:
                chunk = self.sock.recv(n - len(buf))
            except ConnectionResetError:
                return None
            if not chunk:
                return None
            buf += chunk
        return bytes(buf)
