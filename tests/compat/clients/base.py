"""The interface every client driver implements, and the consumer handles scenarios watch."""

from __future__ import annotations

import subprocess
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from tests.compat.records import Got, Rec, RecordStyle
from tests.support.waiting import wait_until

ShareAcks = Mapping[tuple[int, int], str]  # (partition, offset) -> "release" or "reject"

DEADLINE_S = 90.0  # a safety net for a hung client on a busy machine, never a performance threshold
POLL_S = 0.05

# Settings every group member uses: a 15 s session timeout (6 s, Kafka's minimum, evicted a member whose
# client starved on a loaded 2-core machine; no scenario waits for an eviction), quick heartbeats so that a
# rebalance is noticed soon, and short reconnect backoffs for the broker-restart scenario.
SESSION_TIMEOUT_MS = 15000
HEARTBEAT_INTERVAL_MS = 500
RECONNECT_BACKOFF_MAX_MS = 1000


@dataclass(frozen=True, slots=True)
class TopicView:
    """What a client's metadata call told it about one topic and the cluster."""

    brokers: list[tuple[int, str, int]]
    partitions: dict[int, int]  # partition -> leader id
    cluster_id: str | None = None


@dataclass(frozen=True, slots=True)
class TxnStep:
    """One transaction of the transactions scenario: its records (to their partitions of the topic),
    whether it commits or aborts, and offsets (partition of the topic -> next offset) to send to it
    for `group`, if any."""

    records: Sequence[Rec]
    commit: bool
    group: str | None = None
    offsets: dict[int, int] | None = None


@dataclass(frozen=True, slots=True)
class GroupView:
    """What a client's admin calls said about one consumer group."""

    listed: bool  # the group appeared in the client's group listing
    protocol_type: str
    state: str
    protocol: str
    members: list[tuple[str, dict[str, list[int]]]]  # (client id, assignment topic -> partitions)


class Feed:
    """What one consumer saw, appended by its thread or its process, read by the test."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._records: list[Got] = []
        self._assignments: list[frozenset[int]] = []
        self._deliveries: list[tuple[int, int, int]] = []
        self.errors: list[str] = []
        self.log: list[str] = []
        self.ready = threading.Event()
        self.closed = threading.Event()

    def add(self, got: Got) -> None:
        with self._lock:
            self._records.append(got)

    def delivered(self, partition: int, offset: int, count: int) -> None:
        """A share consumer was handed the record at `offset` of `partition`, for the `count`th time."""
        with self._lock:
            self._deliveries.append((partition, offset, count))

    @property
    def deliveries(self) -> list[tuple[int, int, int]]:
        """(partition, offset, delivery count) of each record a share consumer was handed, in order."""
        with self._lock:
            return list(self._deliveries)

    def assigned(self, partitions: Sequence[int]) -> None:
        with self._lock:
            self._assignments.append(frozenset(partitions))

    def group_assigned(self, partitions: Iterable[int]) -> None:
        """The group gave this member `partitions` (its client's rebalance callback said so)."""
        owned = sorted(partitions)
        self.note(f"assigned {owned}")
        self.assigned(owned)

    def group_revoked(self, partitions: Iterable[int]) -> None:
        self.note(f"revoked {sorted(partitions)}")

    def fail(self, message: str) -> None:
        with self._lock:
            self.errors.append(message)

    def note(self, line: str) -> None:
        with self._lock:
            self.log.append(line)
            del self.log[:-200]

    @property
    def records(self) -> list[Got]:
        with self._lock:
            return list(self._records)

    @property
    def assignment(self) -> frozenset[int] | None:
        """The latest assignment, None before the first."""
        with self._lock:
            return self._assignments[-1] if self._assignments else None

    @property
    def assignments(self) -> list[frozenset[int]]:
        with self._lock:
            return list(self._assignments)


class Consumer(ABC):
    """A running consumer: a group member, or a reader of assigned partitions."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.feed = Feed()

    @abstractmethod
    def start(self) -> Consumer: ...

    @abstractmethod
    def stop(self) -> None:
        """Close gracefully: commit what it must, leave the group, return when it has."""

    def describe(self) -> str:
        f = self.feed
        tail = "\n    ".join(f.log[-15:])
        return (
            f"{self.name}: {len(f.records)} records, assignment {sorted(f.assignment or ())}, "
            f"errors {f.errors[-5:]}\n    {tail}"
        )


class ThreadConsumer(Consumer):
    """A consumer whose loop runs in a thread of the test process."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.stopping = threading.Event()
        self._thread: threading.Thread | None = None

    @abstractmethod
    def run(self) -> None:
        """The client's consume loop: runs until `stopping` is set, then closes the client."""

    def start(self) -> ThreadConsumer:
        def main() -> None:
            try:
                self.run()
            except BaseException as exc:
                self.feed.fail(f"{type(exc).__name__}: {exc}")
            finally:
                self.feed.closed.set()

        self._thread = threading.Thread(target=main, name=self.name, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self.stopping.set()
        if self._thread is not None:
            self._thread.join(DEADLINE_S)
            assert not self._thread.is_alive(), f"{self.name} did not close"


class ProcessConsumer(Consumer):
    """A consumer that is a child process (kcat, node); lines it prints are parsed into the feed."""

    def __init__(self, name: str, argv: list[str], cwd: str | None = None) -> None:
        super().__init__(name)
        self.argv = argv
        self.cwd = cwd
        self.proc: subprocess.Popen[bytes] | None = None
        self._readers: list[threading.Thread] = []

    @abstractmethod
    def on_stdout(self, line: bytes) -> None: ...

    def on_stderr(self, line: bytes) -> None:
        self.feed.note(line.decode(errors="replace").rstrip())

    def start(self) -> ProcessConsumer:
        self.proc = subprocess.Popen(
            self.argv, cwd=self.cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        assert self.proc.stdout is not None and self.proc.stderr is not None
        for stream, handler in ((self.proc.stdout, self.on_stdout), (self.proc.stderr, self.on_stderr)):
            t = threading.Thread(target=self._pump, args=(stream, handler), daemon=True)
            t.start()
            self._readers.append(t)
        return self

    def _pump(self, stream: object, handler: Callable[[bytes], None]) -> None:
        for line in iter(stream.readline, b""):  # type: ignore[attr-defined]
            try:
                handler(line)
            except Exception as exc:
                self.feed.fail(f"unparsable line {line[:200]!r}: {exc}")
        if stream is self.proc.stdout:  # type: ignore[union-attr]
            self.feed.closed.set()

    @abstractmethod
    def request_stop(self) -> None:
        """Ask the process to close gracefully (a signal, or a line on stdin)."""

    def stop(self) -> None:
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.request_stop()
        try:
            self.proc.wait(DEADLINE_S)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError(f"{self.name} did not close:\n{self.describe()}") from None
        for t in self._readers:
            t.join(10)
        code = self.proc.returncode
        assert code == 0, f"{self.name} exited with {code}:\n{self.describe()}"

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def wait_for_consumers(
    condition: Callable[[], bool], what: str, consumers: Sequence[Consumer], timeout: float = DEADLINE_S
) -> None:
    """Wait until `condition` holds while `consumers` run; fail early if one of them reported an error,
    and show what each one saw."""

    def states() -> str:
        return "\n  ".join(c.describe() for c in consumers)

    def check() -> bool:
        if any(c.feed.errors for c in consumers):
            raise AssertionError(f"waiting for {what}: a consumer failed\n  {states()}")
        return condition()

    wait_until(check, timeout, what, detail=states, poll=POLL_S)


class Driver(ABC):
    """One client under test. Methods do one thing in the client's own idiom and report what the
    client saw; the scenarios judge it. A scenario the client cannot express is listed in
    `not_applicable` (scenario id -> reason), and its method is never called."""

    name: str
    codecs: tuple[str, ...] = ("none", "gzip", "snappy", "lz4", "zstd")
    style = RecordStyle()
    not_applicable: dict[str, str] = {}
    notes: dict[str, str] = {}  # scenario id -> how the client does it, shown with a pass

    @property
    @abstractmethod
    def version(self) -> str: ...

    @abstractmethod
    def metadata(self, bootstrap: str, topic: str) -> TopicView: ...

    def create_topic(self, bootstrap: str, topic: str, partitions: int) -> None:
        raise NotImplementedError

    def delete_topic(self, bootstrap: str, topic: str) -> None:
        raise NotImplementedError

    def list_topics(self, bootstrap: str) -> set[str]:
        raise NotImplementedError

    @abstractmethod
    def produce(self, bootstrap: str, topic: str, recs: Sequence[Rec], codec: str) -> None:
        """Send `recs` to their partitions with `codec`, and return once all are acknowledged."""

    @abstractmethod
    def reader(self, bootstrap: str, topic: str, partitions: int, start: str) -> Consumer:
        """A consumer of all partitions from `start` ('earliest' or 'latest'); `feed.ready` is set once
        its positions are resolved, so that records produced after are the ones it must see."""

    @abstractmethod
    def member(self, bootstrap: str, group: str, topic: str, name: str, assignor: str = "range") -> Consumer:
        """A group member subscribed to `topic` that commits synchronously after processing, from the
        earliest offset when the group has none."""

    def commit_and_fetch(
        self, bootstrap: str, group: str, topic: str, offsets: dict[int, int]
    ) -> dict[int, int]:
        """Commit `offsets` for the group the client's way, then read the group's committed offsets."""
        raise NotImplementedError

    def describe_group(self, bootstrap: str, group: str) -> GroupView:
        raise NotImplementedError

    def new_protocol_member(self, bootstrap: str, group: str, topic: str, name: str) -> Consumer:
        """`member`, but with the KIP-848 consumer group protocol (assignment computed by the broker)."""
        raise NotImplementedError

    def group_type(self, bootstrap: str, group: str) -> str:
        """The group's type as the client's admin API lists and describes it ("consumer", "classic")."""
        raise NotImplementedError

    def set_group_config(self, bootstrap: str, group: str, name: str, value: str) -> None:
        """Set a group config (a GROUP resource, KIP-848/932) with the client's admin API."""
        raise NotImplementedError

    def share_member(
        self, bootstrap: str, group: str, topic: str, name: str, acks: ShareAcks | None = None
    ) -> Consumer:
        """A share-group member (KIP-932) subscribed to `topic`; its feed gets each record it is handed
        (`feed.add`) with its delivery count (`feed.delivered`). With `acks` None it acknowledges in
        implicit mode (each poll accepts the previous one's records, closing accepts the last). With
        `acks`, in explicit mode: each record is acknowledged as `acks[(partition, offset)]` says
        ("release" or "reject"; "accept" when absent) and committed after each poll; once every record
        named in `acks` has been acknowledged, it polls no more, staying in the group until stopped."""
        raise NotImplementedError

    def transact(self, bootstrap: str, topic: str, transactional_id: str, steps: Sequence[TxnStep]) -> None:
        """With one transactional producer, run a transaction per step: send its records, send its
        offsets to the transaction, commit or abort; return once the last one has ended."""
        raise NotImplementedError

    def old_protocol(self, bootstrap: str, topic: str, recs: Sequence[Rec]) -> list[Got]:
        """With the client pinned to a Kafka 0.10 broker's protocol versions (message format v1),
        produce `recs` to their partitions and read every partition of `topic` back from the start."""
        raise NotImplementedError
