"""The client x scenario result table, collected during the run, and the frameworks table, read from
the same run's framework tests: written together as COMPATIBILITY.md."""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any

TESTS = Path(__file__).resolve().parents[1]

SCENARIOS: list[tuple[str, str]] = [
    ("bootstrap", "bootstrap + metadata"),
    ("topic-admin", "create / delete topic"),
    ("produce-none", "produce keys, headers, timestamps: uncompressed"),
    ("produce-gzip", "produce keys, headers, timestamps: gzip"),
    ("produce-snappy", "produce keys, headers, timestamps: snappy"),
    ("produce-lz4", "produce keys, headers, timestamps: lz4"),
    ("produce-zstd", "produce keys, headers, timestamps: zstd"),
    ("consume-earliest", "consume from earliest"),
    ("consume-latest", "consume from latest"),
    ("group-rebalance", "group of 3 on 6 partitions, one leaves, one joins: each record once"),
    ("commit-fetch", "commit + fetch committed offsets"),
    ("list-describe-groups", "list / describe groups"),
    ("broker-restart", "broker restart mid-group: the group carries on, offsets kept"),
    ("cross-client-group", "cross-client group (range), default initial rebalance delay"),
    ("transactions", "transactions: commit, abort, offsets sent to a transaction"),
    ("consumer-protocol", "KIP-848 consumer protocol: group of 3 on 6 partitions, one leaves, one joins"),
    ("old-protocol", "old protocol: produce and consume as a pre-0.11 client (message formats v0/v1)"),
    ("security", "SASL_SSL/SCRAM-SHA-512 and SASL_PLAINTEXT/PLAIN: produce, group, commit; wrong password"),
    ("share-group", "share group (KIP-932): two members share records; release redelivers, reject does not"),
]
CHECKS = """\
What each scenario checks (every client runs each scenario at the same time as the others, on its
own topic and group; the broker is a `kafkito serve` process with `group.initial.rebalance.delay.ms=0`
except where said; what the broker stored and committed is read back with raw protocol requests):

- **bootstrap + metadata**: the client's metadata shows the one broker (id, host, port), the
  topic's partitions with their leader, and the cluster id where the client exposes it.
- **create / delete topic**: the client's admin API creates a topic of 5 partitions, lists it,
  deletes it, and stops listing it.
- **produce**: 60 records over 3 partitions with null, empty and binary keys and values, repeated
  header names and explicit out-of-order timestamps, where the client can set them; every record is
  stored byte for byte in its partition, in order, in batches of the requested codec.
- **consume from earliest / latest**: the client reads back a known record set byte for byte
  (offsets, keys, values, headers, timestamps); from latest, it sees exactly the records produced
  after it reported its position.
- **group of 3**: three members of one client share 6 partitions; records are produced while one
  member leaves and while another joins; each member commits synchronously after processing (in
  the client's idiom for exact commits across rebalances); every record is consumed exactly once
  and the committed offsets end at the log end.
- **commit + fetch**: offsets committed for a group (with metadata where the client sets it) are
  read back by the client, by its admin API where it has one, and by a raw OffsetFetch.
- **list / describe groups**: with one member consuming, the group is listed, and described as
  Stable, protocol type consumer, assignor range, with the member's client id and assignment; after
  it leaves, Empty with no members.
- **broker restart**: every client runs a group of two; once all have consumed and committed, the
  broker is stopped (SIGTERM) and started again on the same data; the committed offsets survive,
  the members carry on (rejoining if their client chooses to), the group is Stable with both, and
  every record before and after is consumed exactly once.
- **cross-client group**: one member of each client in one group of 10 partitions with the range
  assignor, on a broker with Kafka's default `group.initial.rebalance.delay.ms` (3000): each member
  gets a contiguous range, every record is consumed once, also after one member leaves.
- **transactions**: one transactional producer runs three transactions on 3 partitions: the first
  commits with a group's offsets sent to it, the second aborts with other offsets, the third
  commits. Read back by raw Fetch: read_committed gives exactly the records of the two committed
  transactions (aborted batches filtered by the aborted-transactions list, as consumers do),
  read_uncommitted all three, one control batch per partition per transaction, nothing left open
  (last stable offset = high watermark), and the group's committed offsets are the first
  transaction's.
- **KIP-848 consumer protocol**: the group scenario with the next-generation group protocol
  (ConsumerGroupHeartbeat; the broker's `uniform` assignor assigns, the client only reconciles):
  three members on 6 partitions, one leaves, one joins, each record consumed exactly once, the
  committed offsets at the log end, and the admin client lists and describes the group as type
  `consumer`.
- **old protocol**: the client pinned to an old broker's versions without ApiVersions (kafka-python
  `api_version=(0, 10, 0)`: Produce v2, Fetch v3, message format v1; librdkafka
  `broker.version.fallback=0.9.0`: Produce v1, Fetch v1, ListOffsets v0, format v0) produces 30
  records over 3 partitions and reads them back byte for byte; a raw Fetch v4 finds them stored as
  v2 batches, keys and values byte-identical, without headers.
- **security**: on a broker with SASL_PLAINTEXT and SASL_SSL listeners (certificates from `kafkito
  certs`), the client logs in with SCRAM-SHA-512 over TLS and then with PLAIN, each time produces 10
  records, consumes them in a group and commits (read back by a raw OffsetFetch on the PLAINTEXT
  listener, or the client's own); with a wrong password each login fails with the broker's
  `Authentication failed` message, as the client reports it (exception, error callback or log).
- **share group**: the group's `share.auto.offset.reset` is set to earliest through the client's
  admin API (a GROUP config); two share consumers of the group (implicit acknowledgement) consume 60
  records of 3 partitions: each record is delivered once (delivery count 1), to one member, byte for
  byte, and once they have left, a raw DescribeShareGroupOffsets v1 shows every record acknowledged
  as Kafka 4.4 shows it: lag 0 in every partition (the persisted start offset may still be behind).
  Then, on a topic of one partition, a member in explicit mode releases one record, rejects one and
  accepts one, and polls no more while staying in the group: a second member is handed the released
  record, with delivery count 2, and never the rejected one (the lag comes to 0).
"""
SCENARIO_IDS = [s for s, _ in SCENARIOS]


class Outcome(Enum):
    PASS = "pass"
    FAIL = "FAIL"
    NOT_APPLICABLE = "n/a"


@dataclass(frozen=True, slots=True)
class Cell:
    outcome: Outcome
    note: str = ""


class Matrix:
    """Results by (scenario, client); complete when every client has every scenario."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.clients: dict[str, str] = {}  # name -> version, in column order
        self.cells: dict[tuple[str, str], Cell] = {}

    def add_client(self, name: str, version: str) -> None:
        with self._lock:
            self.clients.setdefault(name, version)

    def record(self, scenario: str, client: str, outcome: Outcome, note: str = "") -> None:
        assert scenario in SCENARIO_IDS, scenario
        with self._lock:
            self.cells[(scenario, client)] = Cell(outcome, note)

    def missing(self, expected_clients: list[str]) -> list[tuple[str, str]]:
        return [(s, c) for s in SCENARIO_IDS for c in expected_clients if (s, c) not in self.cells]

    def render(self, header_note: str = "", frameworks: FrameworkResults | None = None) -> str:
        names = list(self.clients)
        lines = [
            "# Compatibility matrix",
            "",
            "Written by the compatibility suite (`make compat`, `tests/compat/`) from its own run;",
            "do not edit by hand. Each client is driven in its own idiom against a kafkito broker;",
            "`n/a` is a scenario the client cannot express, with the reason in the notes.",
        ]
        lines += ["", CHECKS.rstrip()]
        if header_note:
            lines += ["", header_note]
        lines += [
            "",
            "| scenario | " + " | ".join(f"{n} {self.clients[n]}" for n in names) + " |",
            "|---|" + "---|" * len(names),
        ]
        notes: list[str] = []
        for sid, title in SCENARIOS:
            row = []
            for n in names:
                cell = self.cells.get((sid, n))
                if cell is None:
                    row.append("not run")
                    continue
                text = cell.outcome.value
                if cell.outcome is Outcome.FAIL:
                    text = "**FAIL**"
                if cell.note:
                    note = f"{n}: {_one_line(cell.note)}"
                    if note not in notes:
                        notes.append(note)
                    text += f" [{notes.index(note) + 1}]"
                row.append(text)
            lines.append(f"| {title} | " + " | ".join(row) + " |")
        counts = {o: sum(1 for c in self.cells.values() if c.outcome is o) for o in Outcome}
        lines += [
            "",
            f"{counts[Outcome.PASS]} pass, {counts[Outcome.FAIL]} fail, "
            f"{counts[Outcome.NOT_APPLICABLE]} not applicable.",
        ]
        if notes:
            lines += ["", "Notes:", ""] + [f"{i}. {n}" for i, n in enumerate(notes, 1)]
        if frameworks is not None:
            lines += ["", *frameworks.render()]
        return "\n".join(lines) + "\n"


def _one_line(text: str, limit: int = 300) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


@dataclass(frozen=True, slots=True)
class Framework:
    """A framework users run on top of Kafka, and the tests (paths under tests/) that run it on kafkito.
    `absent` is the row's text while none of those tests exists yet."""

    name: str
    version: str
    tests: tuple[str, ...]
    absent: str = ""


FRAMEWORKS: list[Framework] = [
    Framework("Kafka Connect", "connect-runtime 4.4.0, distributed", ("connect/",)),
    Framework(
        "Spark's Kafka connector",
        "spark-sql-kafka-0-10_2.13 4.2.0 (PySpark 4.2.0)",
        ("spark/test_connector.py",),
    ),
    Framework(
        "kafkito_spark",
        'format("kafkito") on PySpark 4.2.0, at-least-once and exactly-once',
        ("spark/test_source.py", "spark/test_exactly_once.py"),
    ),
    Framework(
        "Flink",
        "flink-connector-kafka",
        (),
        "not run here yet: no Flink job is part of the suite (a JobManager and a TaskManager next to the "
        "suite's JVMs on this 2-core machine were left for later)",
    ),
    Framework(
        "Kafka Streams",
        "kafka-streams 4.4.0 (streams groups, KIP-1071)",
        ("streams_groups/test_kafka_streams.py",),
        "pending: the Streams application test of tests/streams_groups is being written",
    ),
]
FRAMEWORKS_INTRO = """\
Frameworks on top of Kafka's clients, run on kafkito by the suite's framework tests (`make compat`
runs them with the client scenarios; each row is the outcome of its tests in that run, which are
listed under the table)."""


@dataclass
class FrameworkResults:
    """Outcomes of the framework tests in a run, by test node id (`tests/connect/...::test_x`)."""

    outcomes: dict[str, str] = field(default_factory=dict)

    @classmethod
    def from_stats(cls, stats: Mapping[str, Iterable[Any]]) -> FrameworkResults:
        """From the terminal reporter's `stats` (outcome -> reports), the call phase's outcome of each
        test, or the failed set-up's."""
        results = cls()
        for outcome in ("passed", "failed", "error", "skipped"):
            for report in stats.get(outcome, ()):
                nodeid = getattr(report, "nodeid", "")
                if nodeid and (getattr(report, "when", "call") == "call" or outcome != "passed"):
                    results.outcomes.setdefault(nodeid, outcome)
        return results

    def of(self, framework: Framework) -> dict[str, str]:
        prefixes = tuple(f"tests/{t}" for t in framework.tests)
        return {n: o for n, o in self.outcomes.items() if prefixes and n.startswith(prefixes)}

    def render(self) -> list[str]:
        lines = [
            "## Frameworks",
            "",
            FRAMEWORKS_INTRO,
            "",
            "| framework | as run | result |",
            "|---|---|---|",
        ]
        listed: list[str] = []
        for fw in FRAMEWORKS:
            ran = self.of(fw)
            exists = any((TESTS / t).exists() for t in fw.tests)
            if not exists:
                result = fw.absent or "no tests"
            elif not ran:
                result = "not run"
            else:
                failed = sum(1 for o in ran.values() if o != "passed")
                result = (
                    f"pass ({len(ran)} tests)" if not failed else f"**FAIL** ({failed} of {len(ran)} tests)"
                )
                listed += [f"- {fw.name}: `{n.removeprefix('tests/')}`: {o}" for n, o in sorted(ran.items())]
            lines.append(f"| {fw.name} | {fw.version} | {result} |")
        if listed:
            lines += ["", "The framework tests of this run:", "", *listed]
        return lines
