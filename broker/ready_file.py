"""`kafkito serve --ready-file PATH`: where the broker listens, written once it serves.

A parent that starts `kafkito serve --port 0` (tests, benchmarks, scripts) learns the ports the
broker bound from this file instead of picking a free port, closing it and hoping it is still free
when the child binds it. The file is written whole or not at all (a temporary file renamed over
it), only once every node's listeners (and the console, with `--http`) accept connections, and is
removed when the broker exits. It is one JSON object:

    {"pid": 4242, "host": "127.0.0.1", "port": 40321, "ports": [40321],
     "listeners": {"PLAINTEXT": 40321}, "console": "http://127.0.0.1:40322/console/"}

`ports` holds each node's port (`--nodes N`), `listeners` the first node's port of each listener
when `listeners` is set, and `console` is null without `--http`.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kafkito.broker.app import Broker

POLL_S = 0.005  # how often the broker is looked at until it serves (start-up takes ~100 ms)


class ReadyFile:
    """Writes the ready file for one `serve`; `console_started` is the console's start-up hook."""

    def __init__(self, path: str | Path, console: bool) -> None:
        self.path = Path(path)
        self._wants_console = console
        self._console_url: str | None = None

    def console_started(self, broker: Broker, url: str | None) -> None:
        self._console_url = url

    def _serving(self, broker: Broker) -> bool:
        nodes = broker.nodes
        if len(nodes.bound) < nodes.count:
            return False
        if len(nodes.listener_bound) < nodes.count * len(nodes.listeners):
            return False
        return not self._wants_console or self._console_url is not None

    def contents(self, broker: Broker) -> dict[str, Any]:
        nodes = broker.nodes
        first = broker.config.node_id
        return {
            "pid": os.getpid(),
            "host": broker.config.host,
            "port": nodes.bound[first],
            "ports": [nodes.bound[node_id] for node_id in nodes.ids],
            "listeners": {
                name: port for (node_id, name), port in nodes.listener_bound.items() if node_id == first
            },
            "console": self._console_url,
        }

    def write(self, broker: Broker) -> None:
        """Write the file atomically: a reader sees the whole object or no file."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(self.contents(broker)) + "\n")
        tmp.replace(self.path)

    async def serve(self, broker: Broker, main: Coroutine[Any, Any, int]) -> int:
        """Run `main` (the broker's serve), writing the file once it serves and removing it at exit."""
        self.path.unlink(missing_ok=True)  # a file left by a killed broker says nothing of this one
        serving = asyncio.ensure_future(main)
        try:
            while not serving.done():
                if self._serving(broker):
                    self.write(broker)
                    break
                await asyncio.sleep(POLL_S)
            return await serving
        finally:
            self.path.unlink(missing_ok=True)
