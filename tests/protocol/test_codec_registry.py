"""The codec's api_key -> message class table matches kafka-python (and kafkito's own schemas for the
APIs and versions kafka-python lacks), and start-up loads none of it."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from typing import Any

from kafkito.protocol.codec import MESSAGES, REQUESTS, RESPONSES

_PACKAGES = (
    "kafka.protocol.admin",
    "kafka.protocol.consumer",
    "kafka.protocol.metadata",
    "kafka.protocol.producer",
    "kafka.protocol.sasl",
)
_CLIENT = ("kafka.admin", "kafka.consumer", "kafka.producer", "kafka.net")
# Messages kafka-python does not ship, built by its machinery from kafkito's own JSON schemas.
_OWN = (
    "kafkito.protocol.api_versions",
    "kafkito.protocol.consumer_groups",
    "kafkito.protocol.delegation_tokens",
    "kafkito.protocol.group_offsets",
    "kafkito.protocol.share_fetch",
    "kafkito.protocol.share_groups",
    "kafkito.protocol.streams_groups",
    "kafkito.protocol.telemetry",
)


def _kafka_python_messages() -> tuple[dict[int, Any], dict[int, Any]]:
    for name in (*_PACKAGES, *_OWN):
        importlib.import_module(name)
    from kafka.protocol.api_message import ApiMessage

    requests: dict[int, Any] = {}
    responses: dict[int, Any] = {}
    stack = list(ApiMessage.__subclasses__())
    while stack:
        cls = stack.pop()
        stack.extend(cls.__subclasses__())
        if getattr(cls, "_class_version", None) is not None or cls._json is None:
            continue
        if cls.__module__.startswith((*_PACKAGES, *_OWN)):
            table = requests if cls.is_request() else responses
            known = table.get(cls.API_KEY)
            # kafkito's own class of an API (newer versions than kafka-python's) is the codec's
            if known is None or not known.__module__.startswith(_OWN):
                table[cls.API_KEY] = cls
    return requests, responses


def test_table_names_the_class_kafka_python_defines_for_every_api_key() -> None:
    requests, responses = _kafka_python_messages()
    assert dict(REQUESTS) == requests
    assert dict(RESPONSES) == responses
    assert set(MESSAGES) == set(requests) == set(REQUESTS)
    assert 9999 not in REQUESTS and len(REQUESTS) == len(MESSAGES)


def test_unknown_api_key_is_a_key_error() -> None:
    for registry in (REQUESTS, RESPONSES):
        try:
            registry[9999]
        except KeyError:
            continue
        raise AssertionError("an unknown api key must raise KeyError")


def test_serve_imports_no_message_class_before_the_first_request() -> None:
    """What `kafkito serve` imports before it listens: no kafka-python message module (they load per API)."""
    code = (
        "import sys\n"
        "import kafkito.broker.cli, kafkito.broker.logging_setup, kafkito.broker.app, kafkito.broker.server\n"
        "print(sorted(m for m in sys.modules if m.startswith('kafka.')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    loaded = ast.literal_eval(out)
    assert not [m for m in loaded if m.startswith(_PACKAGES)], loaded


def test_message_classes_load_without_kafka_python_client() -> None:
    """The codec imports kafka-python's submodules with the package's `__init__` (the whole client: ~100 ms
    of start-up) deferred, not faked: a client imported later in the same process finds all of it."""
    code = (
        "import sys, kafkito.broker.app\n"
        "from kafkito.protocol.codec import request_class, response_class\n"
        "request_class(3, 12), response_class(18, 3)  # a first Metadata / ApiVersions request\n"
        "assert not [m for m in sys.modules if m.startswith(" + repr(_CLIENT) + ")], sys.modules\n"
        "import kafka\n"
        "from kafka import KafkaConsumer, KafkaProducer\n"
        "from kafka.admin import KafkaAdminClient\n"
        "print(kafka.__version__, KafkaConsumer.__module__, kafka.KafkaAdminClient is KafkaAdminClient)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    version, consumer_module, same_admin = out.split()
    import kafka.version

    assert version == kafka.version.__version__
    assert consumer_module == "kafka.consumer.group"
    assert same_admin == "True"
