"""Running real kafkito brokers for tests: in a background thread, or as a separate process."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from pathlib import Path
from typing import Any, Self, TypeVar

from kafkito.broker.app import Broker
from kafkito.broker.config import Config
from kafkito.purgatory import SteerableClock
from tests.support.net import free_port, wait_for_port
from tests.support.waiting import wait_until

T = TypeVar("T")
__all__ = ["ProcessBroker", "ThreadBroker", "free_port", "wait_for_port", "wait_for_ready_file"]


def wait_for_ready_file(path: Path, proc: subprocess.Popen[Any], timeout: float = 30.0) -> dict[str, Any]:
    """What a child `kafkito serve --ready-file PATH` wrote once it served (its ports: broker.ready_file);
    ChildProcessError when it exited first, AssertionError after `timeout` seconds."""

    def written() -> dict[str, Any] | None:
        try:
            found: dict[str, Any] = json.loads(path.read_text())  # renamed into place whole
        except FileNotFoundError:
            if proc.poll() is not None:
                raise ChildProcessError(f"kafkito serve exited with {proc.returncode}") from None
            return None
        return found

    return wait_until(written, timeout, f"the ready file {path}")


class ThreadBroker:
    """A Broker running on its own event loop in a daemon thread of the test process."""

    def __init__(self, config: Config, use_uvloop: bool = True, clock: SteerableClock | None = None) -> None:
        self.config = config
        self._use_uvloop = use_uvloop
        self._clock = clock  # the broker's clock (injected: e.g. a monotonic source that starts near 0)
        self.loop: asyncio.AbstractEventLoop | None = None
        self.broker: Broker | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> ThreadBroker:
        started: Future[None] = Future()

        def run() -> None:
            if self._use_uvloop:
                import uvloop

                loop: asyncio.AbstractEventLoop = uvloop.new_event_loop()
            else:
                loop = asyncio.new_event_loop()
            asyncio.set_event_loop(loop)
            self.loop = loop
            try:
                self.broker = Broker(self.config, clock=self._clock)
                loop.run_until_complete(self.broker.start())
            except BaseException as exc:
                started.set_exception(exc)
                return
            started.set_result(None)
            loop.run_forever()
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()

        self._thread = threading.Thread(target=run, name="kafkito-broker", daemon=True)
        self._thread.start()
        started.result(timeout=30)
        return self

    @property
    def port(self) -> int:
        assert self.broker is not None
        return self.broker.bound_port

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    def call(self, fn: Callable[[], T], timeout: float = 30) -> T:
        """Run `fn` on the broker's loop thread and return its result."""
        assert self.loop is not None
        fut: Future[T] = Future()

        def run() -> None:
            try:
                fut.set_result(fn())
            except BaseException as exc:
                fut.set_exception(exc)

        self.loop.call_soon_threadsafe(run)
        return fut.result(timeout=timeout)

    def stop(self) -> None:
        if self.loop is None or self.broker is None or self._thread is None:
            return
        asyncio.run_coroutine_threadsafe(self.broker.stop(), self.loop).result(timeout=30)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout=30)
        self.loop = None


class ProcessBroker:
    """`kafkito serve` as a child process: for crash (SIGKILL) and restart tests.

    Without a `port` the child binds a free one itself (`--port 0`) and says which in its
    `--ready-file`; later starts (restarts) ask for that same port again, so that clients keep
    their bootstrap address."""

    def __init__(
        self,
        data_dir: Path,
        port: int | None = None,
        props: dict[str, Any] | None = None,
        args: Sequence[str] = (),
        also_wait: Sequence[int] = (),
    ) -> None:
        """`args`: more `serve` arguments, after the `--set`s; `also_wait`: other ports (HTTP) the
        broker opens, waited for before the Kafka one."""
        self.data_dir = Path(data_dir)
        self._port = port
        self.props = dict(props or {})
        self.args = list(args)
        self.also_wait = list(also_wait)
        self.proc: subprocess.Popen[bytes] | None = None
        self.log_path = self.data_dir.parent / f"{self.data_dir.name}-broker.log"
        self.ready_path = self.data_dir.parent / f"{self.data_dir.name}-ready.json"
        self.ready: dict[str, Any] = {}  # the last start's ready file (broker.ready_file)

    @property
    def port(self) -> int:
        if self._port is None:
            raise RuntimeError("the broker has not started yet: its port is known once it serves")
        return self._port

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    def command(self) -> list[str]:
        cmd = [
            sys.executable, "-m", "kafkito", "serve",
            "--host", "127.0.0.1", "--port", str(self._port or 0), "--data-dir", str(self.data_dir),
            "--log-format", "json", "--ready-file", str(self.ready_path),
        ]  # fmt: skip
        for k, v in self.props.items():
            cmd += ["--set", f"{k}={v}"]
        return cmd + self.args

    def start(self, timeout: float = 30.0) -> Self:
        self.ready_path.unlink(missing_ok=True)
        logf = open(self.log_path, "ab")  # noqa: SIM115 - handed to the child
        self.proc = subprocess.Popen(
            self.command(), stdout=logf, stderr=subprocess.STDOUT, env=os.environ.copy()
        )
        logf.close()
        try:
            self.ready = wait_for_ready_file(self.ready_path, self.proc, timeout)
            for port in self.also_wait:
                wait_for_port("127.0.0.1", port, timeout)
        except (AssertionError, TimeoutError, ChildProcessError) as exc:
            self.kill()
            log = self.log_path.read_text()[-4000:]
            raise RuntimeError(f"broker did not start ({exc}); log:\n{log}") from None
        self._port = int(self.ready["port"])
        return self

    def kill(self) -> None:
        """SIGKILL: no shutdown code runs."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(timeout=30)
        self.proc = None

    def stop(self) -> int | None:
        """SIGTERM and wait for a graceful exit."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        code = self.proc.returncode
        self.proc = None
        return code

    def restart(self) -> Self:
        self.stop()
        return self.start()
