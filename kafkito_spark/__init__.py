"""Spark on Kafka without the JVM connector: a PySpark data source that speaks Kafka via confluent-kafka."""

from kafkito_spark.source import NAME, KafkaDataSource, kafka_schema, register

__all__ = ["NAME", "KafkaDataSource", "kafka_schema", "register"]
