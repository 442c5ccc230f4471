"""Everyday tools that talk to any running Kafka over its protocol: topics, groups, produce, consume.

Each verb lives in its own module and is imported only when it runs: `kafkito serve` never imports
this package's clients (kafka-python's admin, producer and consumer).
"""
