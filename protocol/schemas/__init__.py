"""Kafka-style JSON schemas of the messages kafka-python lacks (loaded by `protocol.consumer_groups`)."""
