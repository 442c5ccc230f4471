// IBM/sarama at the protocol versions of Kafka 0.8.2 to 2.0, run against kafkito by
// tests/go_clients: for each version, a snappy producer to an auto-created topic, a partition
// consumer from the oldest offset, and an offset manager that commits then reads back. It prints
// one JSON object, by version, of what it saw; the Python test asserts on it.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/IBM/sarama"
)

const records = 10

type seen struct {
	Produced  int    `json:"produced"`
	Consumed  int    `json:"consumed"`
	Committed int64  `json:"committed"`
	Metadata  string `json:"metadata"`
	Error     string `json:"error,omitempty"`
}

func consume(client sarama.Client, topic string) (int, error) {
	consumer, err := sarama.NewConsumerFromClient(client)
	if err != nil {
		return 0, err
	}
	defer consumer.Close()
	pc, err := consumer.ConsumePartition(topic, 0, sarama.OffsetOldest)
	if err != nil {
		return 0, err
	}
	defer pc.Close()
	n := 0
	deadline := time.After(30 * time.Second)
	for n < records {
		select {
		case <-pc.Messages():
			n++
		case e := <-pc.Errors():
			return n, e
		case <-deadline:
			return n, fmt.Errorf("only %d records", n)
		}
	}
	return n, nil
}

func commit(client sarama.Client, group, topic string, offset int64) error {
	manager, err := sarama.NewOffsetManagerFromClient(group, client)
	if err != nil {
		return err
	}
	partition, err := manager.ManagePartition(topic, 0)
	if err != nil {
		return err
	}
	partition.MarkOffset(offset, "from sarama")
	partition.Close()
	return manager.Close() // commits what was marked
}

func readBack(client sarama.Client, group, topic string) (int64, string, error) {
	manager, err := sarama.NewOffsetManagerFromClient(group, client)
	if err != nil {
		return 0, "", err
	}
	defer manager.Close()
	partition, err := manager.ManagePartition(topic, 0)
	if err != nil {
		return 0, "", err
	}
	defer partition.Close()
	offset, metadata := partition.NextOffset()
	return offset, metadata, nil
}

func run(bootstrap []string, version sarama.KafkaVersion) (out seen) {
	cfg := sarama.NewConfig()
	cfg.Version = version
	cfg.Producer.Return.Successes = true
	cfg.Producer.Compression = sarama.CompressionSnappy
	topic, group := "sarama-"+version.String(), "sarama-group-"+version.String()
	fail := func(what string, err error) seen {
		out.Error = what + ": " + err.Error()
		return out
	}
	client, err := sarama.NewClient(bootstrap, cfg)
	if err != nil {
		return fail("client", err)
	}
	defer client.Close()
	producer, err := sarama.NewSyncProducerFromClient(client)
	if err != nil {
		return fail("producer", err)
	}
	defer producer.Close()
	for i := 0; i < records; i++ {
		message := &sarama.ProducerMessage{Topic: topic, Value: sarama.StringEncoder(fmt.Sprint(i)), Timestamp: time.Now()}
		if _, _, err := producer.SendMessage(message); err != nil {
			return fail("send", err)
		}
		out.Produced++
	}
	if out.Consumed, err = consume(client, topic); err != nil {
		return fail("consume", err)
	}
	if err := commit(client, group, topic, records); err != nil {
		return fail("commit", err)
	}
	if out.Committed, out.Metadata, err = readBack(client, group, topic); err != nil {
		return fail("offset fetch", err)
	}
	return out
}

func main() {
	bootstrap := []string{os.Args[1]}
	versions := []sarama.KafkaVersion{sarama.V0_8_2_0, sarama.V0_10_0_0, sarama.V0_11_0_0, sarama.V1_0_0_0, sarama.V2_0_0_0}
	out := map[string]seen{}
	for _, version := range versions {
		out[version.String()] = run(bootstrap, version)
	}
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		os.Exit(1)
	}
}
