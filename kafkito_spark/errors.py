"""The errors the Kafka data source raises to users."""

from __future__ import annotations


class KafkaOptionError(ValueError):
    """An option is missing, malformed, or not allowed in this kind of query."""


class KafkaDataLossError(RuntimeError):
    """Offsets a query must read are gone (deleted, compacted away, or the partition vanished)."""

    def __init__(self, message: str) -> None:
        super().__init__(
            f"{message}. Some data may have been lost because it is no longer available in Kafka. "
            "If you want your query to continue despite this, set the option 'failOnDataLoss' to false."
        )
