"""kafkito: a Kafka-wire-compatible broker in Python/asyncio.

The code lives in the repository's top-level `broker/`, `protocol/` and `purgatory/` folders; they
are installed (and imported) as `kafkito.broker`, `kafkito.protocol` and `kafkito.purgatory`, so
that no generic top-level name collides with a user's own package or another distribution.
"""

__version__ = "0.1.0"
