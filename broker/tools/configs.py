"""`kafkito configs describe|alter --topic T|--broker ID|--broker-defaults|--group G`: what
kafka-configs.sh does, every config with its value, its source and whether it is an override.

describe asks DescribeConfigs for every config (with synonyms); alter sends IncrementalAlterConfigs
(SET and DELETE) and reports the broker's refusal (INVALID_CONFIG and co.) in one line.
"""

from __future__ import annotations

import argparse
from typing import Any

from kafkito.broker.tools.connect import admin, kafka_errors
from kafkito.broker.tools.output import ToolError, print_json, table

COLUMNS = ("NAME", "VALUE", "SOURCE", "OVERRIDE", "READ-ONLY", "SENSITIVE")
# The source of a value set on the resource itself (an override), per kind of resource: anything
# else is inherited (a broker's value behind a topic's, the cluster default behind a broker's, Kafka's).
OWN_SOURCE = {
    "topic": "DYNAMIC_TOPIC_CONFIG",
    "group": "DYNAMIC_GROUP_CONFIG",
    "broker": "DYNAMIC_BROKER_CONFIG",
    "cluster": "DYNAMIC_DEFAULT_BROKER_CONFIG",
}


def resource(args: argparse.Namespace, changes: dict[str, Any] | None = None) -> Any:
    from kafka.admin import ConfigResource, ConfigResourceType

    if args.topic is not None:
        return ConfigResource(ConfigResourceType.TOPIC, args.topic, changes)
    if args.group is not None:
        return ConfigResource(ConfigResourceType.GROUP, args.group, changes)
    if args.broker_defaults or args.broker == "":
        return ConfigResource(ConfigResourceType.BROKER, "", changes)
    if not args.broker.isdigit():
        raise ToolError(f"--broker {args.broker!r} is not a broker id (a number; --broker-defaults: all)", 2)
    return ConfigResource(ConfigResourceType.BROKER, args.broker, changes)


def _what(args: argparse.Namespace) -> str:
    if args.topic is not None:
        return f"topic {args.topic}"
    if args.group is not None:
        return f"group {args.group}"
    if args.broker_defaults or args.broker == "":
        return "the cluster-wide broker defaults"
    return f"broker {args.broker}"


def cluster_default_routing(client: Any) -> Any:
    """`client`, sending the cluster-wide broker default (a BROKER resource named '') to any node, as
    Kafka's Admin does: kafka-python routes BROKER resources by their name as a node id, and refuses ''."""
    from kafka.admin import ConfigResourceType

    routed = client._group_config_resources

    def grouped(resources: list[Any]) -> tuple[Any, list[Any]]:
        default = [r for r in resources if r.resource_type == ConfigResourceType.BROKER and r.name == ""]
        by_broker, others = routed([r for r in resources if r not in default])
        return by_broker, others + default

    client._group_config_resources = grouped
    return client


def _kind(args: argparse.Namespace) -> str:
    if args.topic is not None:
        return "topic"
    if args.group is not None:
        return "group"
    return "cluster" if args.broker_defaults or args.broker == "" else "broker"


def _entry(name: str, entry: dict[str, Any], own: str) -> dict[str, Any]:
    source = entry["config_source"]
    return {
        "name": name,
        "value": None if entry["is_sensitive"] else entry["value"],
        "source": source,
        "override": source == own,
        "read_only": entry["read_only"],
        "sensitive": entry["is_sensitive"],
        "synonyms": [
            {"name": s["name"], "value": s["value"], "source": s["source"]} for s in entry["synonyms"]
        ],
    }


def described(client: Any, args: argparse.Namespace) -> list[dict[str, Any]]:
    target = resource(args)
    with kafka_errors():
        found = client.describe_configs([target], include_synonyms=True, config_filter="all")
    kind = target.resource_type.name.lower()
    entries = found.get(kind, {}).get(target.name)
    if entries is None:
        raise ToolError(f"no configs for {_what(args)}")
    if isinstance(entries, (str, Exception)):
        raise ToolError(str(entries))
    own = OWN_SOURCE[_kind(args)]
    return [_entry(name, entries[name], own) for name in sorted(entries)]


def run_describe(args: argparse.Namespace) -> int:
    configs = described(cluster_default_routing(admin(args)), args)
    if args.json:
        print_json(configs)
        return 0
    print(f"All configs for {_what(args)} ({sum(c['override'] for c in configs)} overridden):")
    rows = [
        (
            c["name"],
            "(sensitive)" if c["sensitive"] else c["value"],
            c["source"],
            *("yes" if c[flag] else "no" for flag in ("override", "read_only", "sensitive")),
        )
        for c in configs
    ]
    print(table(COLUMNS, rows))
    if args.synonyms:
        print()
        for c in configs:
            if c["override"] and c["synonyms"]:
                levels = ", ".join(f"{s['source']}:{s['name']}={s['value']}" for s in c["synonyms"])
                print(f"{c['name']}: {levels}")
    return 0


def parse_settings(items: list[str], flag: str) -> dict[str, str]:
    settings: dict[str, str] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise ToolError(f"{flag} expects NAME=VALUE, got {item!r}", 2)
        settings[name.strip()] = value.strip()
    return settings


def alter(client: Any, target: Any, raise_on_unknown: bool = False) -> None:
    """IncrementalAlterConfigs for one resource; the broker's refusal, which kafka-python returns
    rather than raises, is a ToolError."""
    import re

    with kafka_errors():
        results = client.alter_configs([target], raise_on_unknown=raise_on_unknown, incremental=True)
    result = results.get(target.resource_type.name.lower(), {}).get(target.name)
    if result != "OK":  # `[Error 40] InvalidConfigurationError: ...`: said without the code
        raise ToolError(re.sub(r"^\[Error -?\d+\] ", "", str(result)))


def run_alter(args: argparse.Namespace) -> int:
    settings = parse_settings(args.set, "--set")
    if not settings and not args.delete:
        raise ToolError("nothing to alter: pass --set NAME=VALUE or --delete NAME", 2)
    both = sorted(set(settings) & set(args.delete))
    if both:
        raise ToolError(f"{', '.join(both)}: both --set and --delete", 2)
    changes: dict[str, Any] = {k: ("SET", v) for k, v in settings.items()}
    changes.update({name: ("DELETE", None) for name in args.delete})
    alter(cluster_default_routing(admin(args)), resource(args, changes))
    print(f"Completed updating config for {_what(args)}: {', '.join(sorted(changes))}.")
    return 0
