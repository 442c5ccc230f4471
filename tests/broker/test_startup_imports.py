"""What the broker imports before its first request: no API handler, no transaction coordinator, no HTTP.

Each is imported on first use (a handler on its API's first request, the transaction coordinator on
the first transactional one, or at start when `__transaction_state` exists): start-up time is
BENCHMARKS.md's, and this keeps a new top-level import from quietly bringing them back.
"""

from __future__ import annotations

import json
import socket
import struct
import subprocess
import sys
import time
from pathlib import Path

_LOADED = (
    "import json, sys, kafkito.broker.cli, kafkito.broker.app, kafkito.broker.server; "
    "print(json.dumps(sorted(sys.modules)))"
)


def test_serve_imports_no_handler_and_no_transaction_coordinator() -> None:
    out = subprocess.run([sys.executable, "-c", _LOADED], capture_output=True, text=True, check=True)
    loaded = set(json.loads(out.stdout))
    handlers = {m for m in loaded if m.startswith("kafkito.broker.handlers.")}
    assert handlers <= {"kafkito.broker.handlers.registry", "kafkito.broker.handlers.api_versions"}
    assert not {m for m in loaded if m.startswith("kafkito.broker.transactions")}
    # `kafkito control`'s urllib client and the control endpoint's aiohttp: only when asked for.
    assert not loaded & {"urllib.request", "http.client", "aiohttp"}
    # Nor the tools' and control's verbs and their modules: `serve` cannot name them.
    assert not {m for m in loaded if m.startswith(("kafkito.broker.tools", "kafkito.broker.control"))}
    # What consumer groups need on first use only: regexes (google-re2), metadata hashes (hashlib,
    # OpenSSL), the heterogeneous assignor's fractions (with decimal): ~4 ms of every start together.
    eager = loaded & {"re2", "hashlib", "fractions", "decimal"}
    assert not eager, f"{eager}: import them where they are first used (BENCHMARKS.md, start-up)"


def test_the_serve_command_line_parses_without_shutil() -> None:
    """argparse sizes each help formatter with `shutil` (bz2, lzma, zlib: ~1.5 ms); kafkito's measures
    the terminal itself, and `--help` still wraps at the terminal's width (tests/cli)."""
    parse = (
        "import json, sys; from kafkito.broker.cli import _parser; "
        "_parser('serve').parse_known_args(['serve', '--port', '9092']); "
        "print(json.dumps(sorted(sys.modules)))"
    )
    out = subprocess.run([sys.executable, "-c", parse], capture_output=True, text=True, check=True)
    assert not set(json.loads(out.stdout)) & {"shutil", "bz2", "lzma"}


# KIP-848 consumer groups' machinery (`coordinator/consumer/`: groups, heartbeats, assignors, the
# classic-member bridge... ~5 ms): imported by the first consumer-group request or record, not by a
# broker whose `__consumer_offsets` holds classic groups only. Their record types stay (decoding).
_CONSUMER_PART = (
    "kafkito.broker.coordinator.consumer.groups",
    "kafkito.broker.coordinator.consumer.heartbeat",
    "kafkito.broker.coordinator.consumer.classic_members",
    "kafkito.broker.coordinator.consumer.assignors",
    "kafkito.broker.coordinator.consumer.group",
    # KIP-932 share groups' part (`coordinator/share/`), likewise (~4 ms with hashlib)
    "kafkito.broker.coordinator.share.groups",
    "kafkito.broker.coordinator.share.offsets",
    "kafkito.broker.coordinator.share.plan",
)
_REPLAY = f"""
import json, sys, kafkito.broker.cli, kafkito.broker.app, kafkito.broker.server
from kafkito.broker.coordinator import CoordinatorConfig, GroupCoordinator, OffsetAndMetadata, TopicPartition
from kafkito.broker.coordinator.records import GroupMetadataRecord, OffsetCommitRecord
from kafkito.purgatory import MonotonicClock, Timer
part = {_CONSUMER_PART!r}
clock = MonotonicClock()
coordinator = GroupCoordinator(CoordinatorConfig(), clock, Timer(clock))
coordinator.replay(GroupMetadataRecord("classic", "consumer", 1, "range", "m", (), None))
offset = OffsetAndMetadata(5, "", -1, 0, None)
coordinator.replay(OffsetCommitRecord("classic", TopicPartition("t", 0), offset))
coordinator.on_loaded(["classic"])
coordinator.on_topics_changed()
before = [m for m in part if m in sys.modules]
from kafkito.broker.coordinator.consumer.records import ConsumerGroupMetadataRecord
coordinator.replay(ConsumerGroupMetadataRecord("kip848", 3))
after = [m for m in part if m in sys.modules]
from kafkito.broker.coordinator.share.records import ShareGroupMetadataRecord
coordinator.replay(ShareGroupMetadataRecord("kip932", 2, 0))
share = [m for m in part if m in sys.modules and ".share." in m]
created = [coordinator.get_consumer_group("kip848") is not None]
created.append(coordinator.get_share_group("kip932") is not None)
print(json.dumps([before, after, share, created]))
"""


def test_group_type_machinery_is_imported_by_the_first_record_of_its_type() -> None:
    out = subprocess.run([sys.executable, "-c", _REPLAY], capture_output=True, text=True, check=True)
    before, after, share, created = json.loads(out.stdout.splitlines()[-1])  # after the log lines
    assert before == [], f"{before}: import them where a consumer group first needs them"
    assert {"kafkito.broker.coordinator.consumer.groups", "kafkito.broker.coordinator.consumer.group"} <= {
        *after
    }
    assert not {m for m in after if ".share." in m}, "a consumer group needs no share-group module"
    assert "kafkito.broker.coordinator.share.groups" in share
    assert created == [True, True]


_STARTED = """
import json, sys
from kafkito.testing import start
handle = start()
try:
    print(json.dumps(sorted(sys.modules)))
finally:
    handle.stop()
"""


def test_a_started_broker_has_no_group_type_part_and_no_authorizer() -> None:
    out = subprocess.run([sys.executable, "-c", _STARTED], capture_output=True, text=True, check=True)
    loaded = set(json.loads(out.stdout.splitlines()[-1]))
    assert not loaded & set(_CONSUMER_PART)
    # The ACL modules: only with `authorizer.class.name` set.
    assert not loaded & {"kafkito.broker.security.acls", "kafkito.broker.security.authorizer"}


# Metadata v0 for all topics (correlation id 1, client id "t"): what `kafkito serve` answers first.
_METADATA_V0 = struct.pack(">ihhih", 15, 3, 0, 1, 1) + b"t" + struct.pack(">i", 0)
# Not imported by a first `kafkito serve` up to its first answer (BENCHMARKS.md, start-up): the
# consumer and share groups' record formats and `__consumer_offsets`' reader (imported by the first
# record of their type, or a reload), the share coordinator's config (its first share group), and
# the `idna` codec (an address literal is bound without `getaddrinfo`).
_NOT_AT_FIRST_START = {
    "kafkito.broker.coordinator.consumer.records",
    "kafkito.broker.coordinator.share.records",
    "kafkito.broker.coordinator.share.config",
    "kafkito.broker.offsets.consumer_records",
    "kafkito.broker.offsets.consumer_log",
    "kafkito.broker.offsets.share_records",
    "kafkito.broker.offsets.loader",
    "encodings.idna",
}


def _answer_metadata(port: int, proc: subprocess.Popen[str]) -> None:
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
                s.sendall(_METADATA_V0)
                (size,) = struct.unpack(">i", s.recv(4, socket.MSG_WAITALL))
                assert len(s.recv(size, socket.MSG_WAITALL)) == size
                return
        except (ConnectionRefusedError, ConnectionResetError, struct.error):
            assert proc.poll() is None, "kafkito serve exited"
            time.sleep(0.01)


def test_a_first_serve_answers_metadata_without_group_formats_or_idna(tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    args = ["-X", "importtime", "-m", "kafkito", "serve", "--host", "127.0.0.1", "--port", str(port),
            "--data-dir", str(tmp_path / "data"), "--log-level", "warning"]  # fmt: skip
    proc = subprocess.Popen([sys.executable, *args], stderr=subprocess.PIPE, text=True)
    try:
        _answer_metadata(port, proc)
    finally:
        proc.terminate()
        err = proc.communicate(timeout=60)[1]
    lines = [line for line in err.splitlines() if line.startswith("import time:")]
    imported = {line.rsplit("|", 1)[1].strip() for line in lines}
    assert "kafka.protocol.metadata.metadata" in imported  # the log holds the start up to the answer
    eager = imported & _NOT_AT_FIRST_START
    assert not eager, f"{eager}: import them where they are first used (BENCHMARKS.md, start-up)"


def _serve_imports(data_dir: Path, then: bytes | None = None) -> set[str]:
    """The modules a `kafkito serve` imports up to its first Metadata answer (and `then`'s, if given)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    args = ["-X", "importtime", "-m", "kafkito", "serve", "--host", "127.0.0.1", "--port", str(port),
            "--data-dir", str(data_dir), "--log-level", "warning"]  # fmt: skip
    proc = subprocess.Popen([sys.executable, *args], stderr=subprocess.PIPE, text=True)
    try:
        _answer_metadata(port, proc)
        if then is not None:
            with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
                s.sendall(then)
                (size,) = struct.unpack(">i", s.recv(4, socket.MSG_WAITALL))
                assert len(s.recv(size, socket.MSG_WAITALL)) == size
    finally:
        proc.terminate()
        err = proc.communicate(timeout=60)[1]
    return {line.rsplit("|", 1)[1].strip() for line in err.splitlines() if line.startswith("import time:")}


def test_a_restart_with_no_group_records_does_not_load_the_offsets_reader(tmp_path: Path) -> None:
    """`__consumer_offsets` exists (a FindCoordinator created it) but holds nothing: a restart skips its
    empty partitions without importing the reader and the record formats."""
    find_coordinator = struct.pack(">hhih", 10, 0, 1, 1) + b"t" + struct.pack(">h", 1) + b"g"
    first = _serve_imports(tmp_path / "data", struct.pack(">i", len(find_coordinator)) + find_coordinator)
    assert (tmp_path / "data" / "__consumer_offsets-0").is_dir()
    assert "kafkito.broker.offsets.loader" not in first
    again = _serve_imports(tmp_path / "data")
    assert not again & _NOT_AT_FIRST_START


def test_a_serve_command_line_that_does_not_parse_leaves_the_collector_on() -> None:
    """`main` pauses the cyclic GC for serve's imports (`_run_serve` freezes and resumes it); a command
    line that fails to parse must not leave it paused in the calling process."""
    import gc

    import pytest

    from kafkito.broker.cli import main

    assert gc.isenabled()
    with pytest.raises(SystemExit):
        main(["serve", "--no-such-flag"])
    assert gc.isenabled()
