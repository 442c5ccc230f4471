"""Writes broker/kafka_config_defs.py: Apache Kafka's broker and topic config definitions, dumped from the
Kafka jars `make install-clients` resolves (DumpConfigDefs.java, run on that classpath), so that
DescribeConfigs can answer every config Kafka has with Kafka's name, type, default and update mode
without Java at run time.

Run again after the reference Kafka's version changes:
    .venv/bin/python tests/kafka_reference/generate_config_defs.py
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from tests.support.kafka_reference import classpath, java  # noqa: E402 - after the path is set

DUMPER = Path(__file__).with_name("DumpConfigDefs.java")
TARGET = REPO / "broker" / "kafka_config_defs.py"
COMMAND = ".venv/bin/python tests/kafka_reference/generate_config_defs.py"

HEADER = '''\
# ruff: noqa: E501 - one definition per line, as generated
"""Apache Kafka {version}'s broker and topic config definitions, as its own ConfigDefs declare them:
name, type, default (rendered as Kafka renders it), importance, whether Kafka treats it as internal
and documents it, and, for a broker config, whether DynamicBrokerConfig lets it change at run time
and its synonyms (the names that stand in for it, in order); for a topic config, the broker configs
that give its default.

GENERATED: do not edit. Written by tests/kafka_reference/generate_config_defs.py, which runs
tests/kafka_reference/DumpConfigDefs.java on the Kafka {version} jars of
tests/kafka_reference/target/classpath.txt (`make install-clients`); regenerate with
    {command}
kafkito's own property table (broker/config.py) stays the source of what kafkito reads; this is
what Kafka has, for DescribeConfigs and the config checks.
"""

from __future__ import annotations

from typing import NamedTuple


class KafkaConfigDef(NamedTuple):
    """One config of Kafka's ConfigDef (`type` is ConfigDef.Type's name; `default` is None when Kafka's
    default is null or there is none, `has_default` tells which)."""

    name: str
    type: str
    default: str | None
    has_default: bool
    importance: str
    internal: bool
    documented: bool
    dynamic: bool
    synonyms: tuple[str, ...]


KAFKA_VERSION = "{version}"
_D = KafkaConfigDef

'''


def dump() -> dict[str, Any]:
    result = subprocess.run(
        [java(), "-cp", classpath(), str(DUMPER)], capture_output=True, text=True, timeout=300, check=True
    )
    loaded: dict[str, Any] = json.loads(result.stdout)
    return loaded


def _row(d: dict[str, Any], dynamic: bool, synonyms: list[str]) -> str:
    fields = (
        d["name"],
        d["type"],
        d["default"],
        d["has_default"],
        d["importance"],
        d["internal"],
        d["documented"],
        dynamic,
        tuple(synonyms),
    )
    return f"    _D{fields!r},".replace("'", '"')


def render(defs: dict[str, Any]) -> str:
    lines = [HEADER.format(version=defs["kafka_version"], command=COMMAND), "# fmt: off"]
    lines.append("# Every broker config of KafkaConfig (AbstractKafkaConfig.CONFIG_DEF).")
    lines.append("BROKER_CONFIG_DEFS: dict[str, KafkaConfigDef] = {d.name: d for d in (")
    for d in defs["broker"]:
        synonyms = d["synonyms"] if d["synonyms"] != [d["name"]] else []
        lines.append(_row(d, d["dynamic"], synonyms))
    lines.append(")}")
    lines.append("")
    lines.append("# Security configs dynamic only with a listener prefix (listener.name.<l>.<config>).")
    security = ", ".join(f'"{n}"' for n in defs["dynamic_security"])
    lines.append(f"DYNAMIC_SECURITY_CONFIGS = frozenset(({security}))")
    lines.append("")
    lines.append("# Every topic config of LogConfig; `synonyms`: the broker configs that give its default.")
    lines.append("TOPIC_CONFIG_DEFS: dict[str, KafkaConfigDef] = {d.name: d for d in (")
    for d in defs["topic"]:
        lines.append(_row(d, False, d["broker_synonyms"]))
    lines.append(")}")
    lines.append("# fmt: on")
    return "\n".join(lines) + "\n"


def main() -> None:
    TARGET.write_text(render(dump()))
    print(f"wrote {TARGET.relative_to(REPO)}")


if __name__ == "__main__":
    main()
