// A segmentio/kafka-go (Debian's golang-github-segmentio-kafka-go-dev) client run against kafkito by
// tests/go_clients: topic creation, a writer, a group reader that commits each message, and a
// second reader of the same group that resumes after the committed offsets. It prints one JSON
// object of what it saw; the Python test asserts on it.
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
	Produced int `json:"produced"`
	First    int `json:"first"`
	Second   int `json:"second"`
	Overlap  int `json:"overlap"`
}

func must(err error, what string) {
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", what, err)
		os.Exit(1)
	}
}

func produce(broker, topic string, from, to int) {
	w := kafka.NewWriter(kafka.WriterConfig{Brokers: []string{broker}, Topic: topic, BatchTimeout: 10 * time.Millisecond, RequiredAcks: -1})
	msgs := []kafka.Message{}
	for i := from; i < to; i++ {
		msgs = append(msgs, kafka.Message{Key: []byte(fmt.Sprint(i)), Value: []byte(fmt.Sprintf("v%03d", i))})
	}
	must(w.WriteMessages(context.Background(), msgs...), "write")
	must(w.Close(), "close writer")
}

// read takes `count` messages as a member of `group`, committing each one. kafka-go 0.2 does not
// leave the group on Close (its LeaveGroup is never sent), so the next reader's join waits for this
// member's session to expire: 6 s, the broker's smallest, instead of the client's default 30 s.
func read(broker, topic, group string, count int) map[string]bool {
	r := kafka.NewReader(kafka.ReaderConfig{
		Brokers: []string{broker}, GroupID: group, Topic: topic, MinBytes: 1, MaxBytes: 10e6,
		SessionTimeout: 6 * time.Second, HeartbeatInterval: time.Second,
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

func main() {
	broker, topic, group := os.Args[1], os.Args[2], os.Args[3]
	conn, err := kafka.Dial("tcp", broker)
	must(err, "dial")
	must(conn.CreateTopics(kafka.TopicConfig{Topic: topic, NumPartitions: 2, ReplicationFactor: 1}), "create topic")
	must(conn.Close(), "close conn")
	out := result{}
	produce(broker, topic, 0, 40)
	first := read(broker, topic, group, 40)
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
