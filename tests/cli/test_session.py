"""docs/cli.md's terminal session (`make run`, then produce, consume, groups describe, topics describe,
consume --offset @TIME with --format) replayed in tmux: the output still matches the docs, modulo
timestamps, ids, log fields, port and data dir."""

from __future__ import annotations

from tests.cli.session import DOC, as_documented, client_commands, doc_blocks, normalize, record


def test_the_documented_session_matches_a_replay() -> None:
    blocks = doc_blocks(DOC.read_text())
    commands = client_commands(blocks["client"])
    # The session shows consume --offset @TIME, as ISO 8601 and as epoch ms, and --format's tokens.
    assert any("--offset @2026-01-01T00:00:00Z" in c and "--format '%t/%p@%o %k=%s" in c for c in commands)
    assert any("--offset @4102444800000" in c for c in commands)
    recording, port, data = record(commands)

    assert normalize(as_documented(recording.client, port, data)) == normalize(blocks["client"])
    assert normalize(as_documented(recording.broker, port, data)) == normalize(blocks["broker"])
    stopped = normalize(as_documented(recording.stopped, port, data))
    assert "[info] broker.stopped" in stopped
    assert not [line for line in stopped if line.startswith(("[warning]", "[error]"))]
    events = [line.split()[-1] for line in stopped if line.startswith("[info]")]
    assert {"topic.created", "group.transition", "broker.stopped"} <= set(events)
