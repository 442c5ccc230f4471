"""Data pipelines that run against kafkito (or any Kafka): small, real, and checked end to end."""
