"""Scenarios and how one runs: the same steps against Kafka and against kafkito, each answer recorded
in a transcript, and the two transcripts compared entry by entry after normalisation.

A scenario is a function of a `Side` (one broker) registered with `@scenario`; it sends requests with
`side.request(api_key, version, **fields)` (or `send`/`recv` to keep several in flight on named
connections) and may read the answers to build its next requests. It runs once per broker, both at
once in two threads, and names what it creates with `side.name(...)`, the same on both brokers and
unique in the session.

What the framework waits for and retries is explicit, never a silent difference: `wait_for` polls
until the broker caught up (Kafka applies a created topic or a coordinator's load after answering),
and `request_settled` resends a request while it gets an error clients retry (a coordinator not
available, not the coordinator, still loading; a partition's leader not there yet), recording the
first other answer. Each wait that needed more than one poll and each retry is a `Step` of that
side, listed in CONFORMANCE.md. A scenario that stops on an exception fails, even when both brokers
stop on the same one (nothing after it was compared), unless it declares that it stops.
"""

from __future__ import annotations

import contextlib
import re
import struct
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from kafkito.protocol.codec import RESPONSES, build_request, is_flexible
from tests.conformance.normalise import Difference, Placeholders, differences, normalise, to_plain
from tests.conformance.readiness import COORDINATOR_NOT_READY, RETRIED_AS_CLIENTS_DO
from tests.support.waiting import wait_until
from tests.support.wire import WireClient

ANSWER_TIMEOUT = 10.0
STOPPED = "scenario stopped"  # the transcript's last entry when the scenario raised
API_NAMES: dict[int, str] = {}  # api key -> name, from Kafka's specs (filled by the session)


@dataclass(slots=True)
class Exchange:
    """One request and its answer as recorded: the label identifies it in both transcripts."""

    label: str
    answer: Any  # the normalised response, or {"connection": "..."} when there was none


@dataclass(frozen=True, slots=True)
class Step:
    """A wait or a retry the framework made on one broker: not compared, listed in the report."""

    what: str
    attempts: int  # polls of a wait, requests of a retried one
    retried: tuple[int, ...] = ()  # the error codes that were retried (none for a wait)

    def describe(self) -> str:
        if not self.retried:
            return f"waited: {self.attempts} polls"
        return f"retried: {self.attempts} requests, on error {', '.join(map(str, self.retried))}"


@dataclass(slots=True)
class Side:
    """One broker as a scenario sees it: named connections, the transcript, the reference versions."""

    bootstrap: str
    scenario: str
    kafka_versions: dict[int, tuple[int, int]]
    transcript: list[Exchange] = field(default_factory=list)
    steps: list[Step] = field(default_factory=list)
    ids: Placeholders = field(default_factory=Placeholders)
    _conns: dict[str, WireClient] = field(default_factory=dict)
    _pending: dict[str, list[tuple[int, int, str]]] = field(default_factory=dict)

    def name(self, stem: str = "t") -> str:
        """A topic/group/transactional id for this scenario, the same on both brokers."""
        return re.sub(r"[^A-Za-z0-9._-]", "-", f"conf-{self.scenario}-{stem}")[:200]

    def conn(self, name: str = "main") -> WireClient:
        client = self._conns.get(name)
        if client is None:
            client = self._conns[name] = WireClient(self.bootstrap, "conformance", ANSWER_TIMEOUT)
        return client

    def request(
        self,
        api_key: int,
        version: int,
        label: str = "",
        conn: str = "main",
        wait: float | None = None,
        **fields: Any,
    ) -> Any:
        """Send, wait for the answer, record it; returns the decoded response (None when none came)."""
        self.send(api_key, version, label, conn, wait, **fields)
        return self.recv(conn)

    def send(
        self,
        api_key: int,
        version: int,
        label: str = "",
        conn: str = "main",
        wait: float | None = None,
        **fields: Any,
    ) -> None:
        """Send without waiting; `wait`: how long recv waits for this answer (ANSWER_TIMEOUT)."""
        request = build_request(api_key, version, **fields)
        client = self.conn(conn)
        client._correlation += 1
        request.with_header(correlation_id=client._correlation, client_id=client.client_id)
        client.sock.settimeout(wait or ANSWER_TIMEOUT)
        self._send_frame(conn, bytes(request.encode(header=True, framed=True)), api_key, version, label)

    def send_raw(self, api_key: int, version: int, body: bytes, label: str, conn: str = "main") -> None:
        """A request whose body is given as bytes, under a header of `version` (any version)."""
        client = self.conn(conn)
        client._correlation += 1
        cid = b"conformance"
        header = struct.pack(">hhih", api_key, version, client._correlation, len(cid)) + cid
        if _flexible_or_false(api_key, version):
            header += b"\x00"
        frame = header + body
        self._send_frame(conn, struct.pack(">i", len(frame)) + frame, api_key, version, label)

    def send_sized(
        self,
        api_key: int,
        version: int,
        size: int,
        rest: bytes,
        label: str,
        conn: str = "main",
        wait: float | None = None,
    ) -> None:
        """A size prefix of `size` (whatever is sent after it) followed by `rest`, recorded as a request
        of `api_key` and `version`; `wait`: how long recv waits for an answer (ANSWER_TIMEOUT)."""
        self.conn(conn).sock.settimeout(wait or ANSWER_TIMEOUT)
        self._send_frame(conn, struct.pack(">i", size) + rest, api_key, version, label)

    def _send_frame(self, conn: str, frame: bytes, api_key: int, version: int, label: str) -> None:
        client = self.conn(conn)
        self._pending.setdefault(conn, []).append((api_key, version, self._label(api_key, version, label)))
        with contextlib.suppress(OSError):  # the answer (none) is recorded by recv
            client.send_raw(frame)

    def recv(self, conn: str = "main") -> Any:
        api_key, version, label = self._pending[conn].pop(0)
        client = self.conn(conn)
        try:
            frame = client.recv_frame()
        except TimeoutError:
            frame, what = None, "no answer"
        except OSError as exc:
            frame, what = None, f"closed ({exc.__class__.__name__})"
        else:
            what = "closed by the broker"
        if frame is None:
            self._drop(conn)
            self.transcript.append(Exchange(label, {"connection": what}))
            return None
        response = _decode(frame, api_key, version)
        if isinstance(response, dict):  # undecodable
            self.transcript.append(Exchange(label, response))
            return None
        self.transcript.append(Exchange(label, normalise(to_plain(response), self.ids)))
        return response

    def quietly(self, api_key: int, version: int, **fields: Any) -> Any:
        """A request whose answer is not recorded (waiting for the broker to catch up); None if none."""
        with WireClient(self.bootstrap, "conformance-wait", ANSWER_TIMEOUT) as client:
            try:
                return client.request(api_key, version, **fields)
            except (OSError, ConnectionError):
                return None

    def request_settled(
        self,
        api_key: int,
        version: int,
        label: str,
        retriable: frozenset[int] = RETRIED_AS_CLIENTS_DO,
        **fields: Any,
    ) -> Any:
        """A request resent (unrecorded) while any error code of its answer, at any level, is one of
        `retriable`, as a client resends it while a coordinator loads or a leader is elected; the first
        other answer is recorded and returned, the retries are a `Step`."""
        answer: Any = None
        attempts = 0
        retried: set[int] = set()

        def settled() -> bool:
            nonlocal answer, attempts
            attempts += 1
            answer = self.quietly(api_key, version, **fields)
            if answer is None:
                return False
            again = error_codes(to_plain(answer)) & retriable
            retried.update(again)
            return not again

        full = self._label(api_key, version, label)
        try:
            wait_until(settled, 20.0, f"{full} to settle on {self.bootstrap}")
        finally:
            if attempts > 1:
                self.steps.append(Step(full, attempts, tuple(sorted(retried))))
        self.transcript.append(Exchange(full, normalise(to_plain(answer), self.ids)))
        return answer

    def find_coordinator(self, key_type: int, key: str, label: str, version: int = 4) -> Any:
        """FindCoordinator (v4: the key in a list), retried while the coordinator is not available."""
        return self.request_settled(10, version, label, COORDINATOR_NOT_READY, key_type=key_type,
                                    coordinator_keys=[key])  # fmt: skip

    def wait_for(self, what: str, ready: Callable[[], bool], timeout: float = 20.0) -> None:
        """Wait until `ready()` (Kafka applies topic and coordinator changes asynchronously)."""
        polls = 0

        def poll() -> bool:
            nonlocal polls
            polls += 1
            return ready()

        try:
            wait_until(poll, timeout, f"{what} on {self.bootstrap}")
        finally:
            if polls > 1:
                self.steps.append(Step(what, polls))

    def note(self, label: str, value: Any) -> None:
        """Record a value the scenario computed (compared like an answer)."""
        self.transcript.append(Exchange(label, normalise(value, self.ids)))

    def _label(self, api_key: int, version: int, label: str) -> str:
        base = f"{API_NAMES.get(api_key, f'api {api_key}')} v{version}"
        return f"{base} {label}".strip()

    def _drop(self, conn: str) -> None:
        client = self._conns.pop(conn, None)
        if client is not None:
            client.close()
        self._pending.pop(conn, None)

    def close(self) -> None:
        for name in list(self._conns):
            self._drop(name)


def error_codes(value: Any) -> set[int]:
    """Every `*error_code` of a plain answer, at any depth."""
    if isinstance(value, dict):
        found = {v for k, v in value.items() if k.endswith("error_code") and isinstance(v, int)}
        for v in value.values():
            if isinstance(v, (dict, list)):
                found |= error_codes(v)
        return found
    if isinstance(value, list):
        return set().union(*(error_codes(v) for v in value)) if value else set()
    return set()


def _flexible_or_false(api_key: int, version: int) -> bool:
    try:
        return is_flexible(api_key, version)
    except (KeyError, ValueError, IndexError):
        return version >= 3 if api_key != 18 else False


def _decode(frame: bytes, api_key: int, version: int) -> Any:
    try:
        return RESPONSES[api_key].decode(frame, version=version, header=True)
    except Exception as exc:
        if api_key == 18 and len(frame) >= 6:  # ApiVersions answers a too-new version in v0
            try:
                return RESPONSES[18].decode(frame, version=0, header=True)
            except Exception:
                pass
        return {"undecodable": f"{exc.__class__.__name__}", "bytes": len(frame)}


ScenarioFn = Callable[[Side], None]


@dataclass(frozen=True, slots=True)
class Scenario:
    name: str
    area: str  # "api", "sequence", "admin"
    run: ScenarioFn
    stops: str | None = None  # why the scenario stops on an exception, when it is meant to


SCENARIOS: dict[str, Scenario] = {}


def scenario(
    area: str, name: str | None = None, stops: str | None = None
) -> Callable[[ScenarioFn], ScenarioFn]:
    """Register a scenario (its name defaults to the function's); `stops`: why it is meant to stop on
    an exception (otherwise a stop fails it, on either broker)."""

    def register(fn: ScenarioFn) -> ScenarioFn:
        key = name or fn.__name__
        assert key not in SCENARIOS, f"two scenarios named {key}"
        SCENARIOS[key] = Scenario(key, area, fn, stops)
        return fn

    return register


@dataclass(slots=True)
class Outcome:
    """A scenario's comparison: how many exchanges, and each difference with its exchange's label."""

    scenario: str
    area: str
    exchanges: int
    differences: list[tuple[str, Difference]]
    labels: list[str]
    # failures no explanation covers: a scenario that stopped without declaring it would
    stopped: list[tuple[str, Difference]] = field(default_factory=list)
    steps: dict[str, list[Step]] = field(default_factory=dict)  # "Kafka"/"kafkito": waits and retries


def run_pair(scn: Scenario, kafka: str, kafkito: str, kafka_versions: dict[int, tuple[int, int]]) -> Outcome:
    """Run a scenario against both brokers at once and compare the transcripts."""
    sides = [Side(kafka, scn.name, kafka_versions), Side(kafkito, scn.name, kafka_versions)]
    with ThreadPoolExecutor(2, thread_name_prefix=f"conformance-{scn.name}") as pool:
        futures = [pool.submit(_run_side, scn, s) for s in sides]
        for f in futures:
            f.result()
    ref, ours = (s.transcript for s in sides)
    diffs: list[tuple[str, Difference]] = []
    for i in range(max(len(ref), len(ours))):
        a = ref[i] if i < len(ref) else Exchange("<missing>", None)
        b = ours[i] if i < len(ours) else Exchange("<missing>", None)
        label = a.label if a.label != "<missing>" else b.label
        if a.label != b.label:
            diffs.append((label, Difference("<exchange>", a.label, b.label)))
            continue
        diffs += [(label, d) for d in differences(a.answer, b.answer)]
    raised = [next((e.answer["raised"] for e in t if e.label == STOPPED), None) for t in (ref, ours)]
    stopped = []
    if any(raised) and scn.stops is None:
        stopped.append((STOPPED, Difference("<stopped>", raised[0], raised[1])))
    steps = {"Kafka": sides[0].steps, "kafkito": sides[1].steps}
    return Outcome(scn.name, scn.area, len(ref), diffs, [e.label for e in ref], stopped, steps)


def _run_side(scn: Scenario, side: Side) -> None:
    try:
        scn.run(side)
    except Exception as exc:
        side.transcript.append(Exchange(STOPPED, {"raised": f"{exc.__class__.__name__}: {exc}"}))
    finally:
        side.close()


def connection_closed(side: Side) -> bool:
    """Whether the last exchange got no answer."""
    last = side.transcript[-1].answer if side.transcript else None
    return isinstance(last, dict) and "connection" in last
