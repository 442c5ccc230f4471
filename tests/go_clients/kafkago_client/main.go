// A segmentio/kafka-go v0.4 client run against kafkito by tests/go_clients: topic creation with the
// admin Client, a Writer, a group reader that commits each message, and a second reader of the same
// group that resumes after the committed offsets. It prints one JSON object of what it saw; the
// Python test asserts on it.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	kafka "github.com/segmentio/kafka-go"
)

type result struct {
	Produced int  `json:"produced"`
	First    int  `json:"first"`
	Second   int  `json:"second"`
	Overlap  int  `json:"overlap"`
	Left     bool `json:"left"` // the first reader's Close left the group: the group was Empty after it
}

func must(err error, what string) {
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", what, err)
		os.Exit(1)
	}
}

func produce(broker, topic string, from, to int) {
	w := &kafka.Writer{Addr: kafka.TCP(broker), Topic: topic, BatchTimeout: 10 * time.Millisecond, RequiredAcks: kafka.RequireAll}
	msgs := []kafka.Message{}
	for i := from; i < to; i++ {
		msgs = append(msgs, kafka.Message{Key: []byte(fmt.Sprint(i)), Value: []byte(fmt.Sprintf("v%03d", i))})
	}
	must(w.WriteMessages(context.Background(), msgs...), "write")
	must(w.Close(), "close writer")
}

// read takes `count` messages as a member of `group`, committing each one; Close leaves the group.
func read(broker, topic, group string, count int) map[string]bool {
	r := kafka.NewReader(kafka.ReaderConfig{
		Brokers: []string{broker}, GroupID: group, Topic: topic, MinBytes: 1, MaxBytes: 10e6,
		SessionTimeout: 10 * time.Second, HeartbeatInterval: time.Second, MaxWait: 200 * time.Millisecond,
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	seen := map[string]bool{}
	for len(seen) < count {
		m, err := r.FetchMessage(ctx)
		must(err, fmt.Sprintf("fetch after %d", len(seen)))
		seen[string(m.Value)] = true
		must(r.CommitMessages(ctx, m), "commit")
	}
	must(r.Close(), "close reader")
	return seen
}

func groupState(client *kafka.Client, group string) string {
	resp, err := client.DescribeGroups(context.Background(), &kafka.DescribeGroupsRequest{GroupIDs: []string{group}})
	must(err, "describe groups")
	return resp.Groups[0].GroupState
}

func main() {
	broker, topic, group := os.Args[1], os.Args[2], os.Args[3]
	client := &kafka.Client{Addr: kafka.TCP(broker), Timeout: 30 * time.Second}
	created, err := client.CreateTopics(context.Background(), &kafka.CreateTopicsRequest{
		Topics: []kafka.TopicConfig{{Topic: topic, NumPartitions: 2, ReplicationFactor: 1}},
	})
	must(err, "create topic")
	must(created.Errors[topic], "create topic "+topic)
	out := result{}
	produce(broker, topic, 0, 40)
	first := read(broker, topic, group, 40)
	out.Left = groupState(client, group) == "Empty"
	produce(broker, topic, 40, 60)
	second := read(broker, topic, group, 20)
	out.Produced, out.First, out.Second = 60, len(first), len(second)
	for v := range second {
		if first[v] {
			out.Overlap++
		}
	}
	must(json.NewEncoder(os.Stdout).Encode(out), "json")
}
