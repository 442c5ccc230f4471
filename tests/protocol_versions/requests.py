"""Default-valued requests of any API and version, built from kafka-python's schemas, with the few
overrides an API needs for its defaults to be a request a client could send."""

from __future__ import annotations

from typing import Any

from kafkito.protocol.codec import build_request

# Fields whose schema default is not what a client sends.
OVERRIDES: dict[int, dict[str, Any]] = {
    0: {"acks": 1},  # Produce: acks=0 gets no response
    18: {"client_software_name": "kafkito-test", "client_software_version": "1.0"},  # ApiVersions v3+
    # DescribeAcls: an ANY filter (the defaults, UNKNOWN, do not parse: the connection closes)
    29: {"resource_type_filter": 1, "operation": 1, "permission_type": 1},
    # StreamsGroupTopologyDescriptionUpdate: its description is a struct with no default
    93: {"topology_description": {"subtopologies": [], "global_stores": []}},
}


def default_request(api_key: int, version: int) -> Any:
    """A request of `version` with every field at its schema default, but the overrides (given to the
    constructor: a struct field without a default cannot be built without one)."""
    return build_request(api_key, version, **OVERRIDES.get(api_key, {}))


def error_codes(message: Any) -> list[int]:
    """Every error_code in a decoded message, at any depth."""
    found: list[int] = []
    struct = getattr(message, "_struct", None)
    if struct is None:
        return found
    for name in struct.fields:
        value = getattr(message, name, None)
        if name == "error_code" and isinstance(value, int):
            found.append(value)
        elif isinstance(value, list):
            for item in value:
                found += error_codes(item)
        elif hasattr(value, "_struct"):
            found += error_codes(value)
    return found
