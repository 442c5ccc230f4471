// An IBM/sarama client run against kafkito by
// tests/go_clients: admin, idempotent and compressed produce, a consumer group of two, committed
// offsets. It prints one JSON object of what it saw; the Python test asserts on it.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"sync"
	"time"

	"github.com/IBM/sarama"
)

const records = 120

type result struct {
	Partitions  int32             `json:"partitions"`
	Produced    int               `json:"produced"`
	Codecs      []string          `json:"codecs"`
	Consumed    int               `json:"consumed"`
	Duplicates  int               `json:"duplicates"`
	Members     []int             `json:"members"` // partitions claimed by each member, all generations
	GroupState  string            `json:"group_state"`
	Committed   map[int32]int64   `json:"committed"`
	EndOffsets  map[int32]int64   `json:"end_offsets"`
	TopicConfig map[string]string `json:"topic_config"`
	Deleted     bool              `json:"deleted"`
}

// shared is what the group's members saw; member is one member's sarama.ConsumerGroupHandler.
type shared struct {
	mu     sync.Mutex
	seen   map[string]int
	claims map[int]int
	done   chan struct{}
	once   sync.Once
}

type member struct {
	*shared
	id int
}

func (m member) Setup(sarama.ConsumerGroupSession) error   { return nil }
func (m member) Cleanup(sarama.ConsumerGroupSession) error { return nil }

func (m member) ConsumeClaim(s sarama.ConsumerGroupSession, c sarama.ConsumerGroupClaim) error {
	m.mu.Lock()
	m.claims[m.id]++
	m.mu.Unlock()
	for msg := range c.Messages() {
		m.mu.Lock()
		m.seen[string(msg.Value)]++
		n := len(m.seen)
		m.mu.Unlock()
		s.MarkMessage(msg, "")
		if n >= records {
			m.once.Do(func() { close(m.done) })
		}
	}
	return nil
}

func must(err error, what string) {
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", what, err)
		os.Exit(1)
	}
}

func main() {
	bootstrap := []string{os.Args[1]}
	topic, group := os.Args[2], os.Args[3]
	cfg := sarama.NewConfig()
	cfg.Version = sarama.V4_0_0_0
	cfg.ClientID = "sarama-test"
	cfg.Producer.Return.Successes = true
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	cfg.Producer.Idempotent = true
	cfg.Net.MaxOpenRequests = 1
	cfg.Consumer.Offsets.Initial = sarama.OffsetOldest
	cfg.Consumer.Offsets.CommitInterval = 100 * time.Millisecond
	cfg.Consumer.Group.Session.Timeout = 10 * time.Second
	cfg.Consumer.Group.Heartbeat.Interval = 500 * time.Millisecond
	out := result{Committed: map[int32]int64{}, EndOffsets: map[int32]int64{}, TopicConfig: map[string]string{}}

	admin, err := sarama.NewClusterAdmin(bootstrap, cfg)
	must(err, "admin")
	retention := "3600000"
	must(admin.CreateTopic(topic, &sarama.TopicDetail{
		NumPartitions: 3, ReplicationFactor: 1, ConfigEntries: map[string]*string{"retention.ms": &retention},
	}, false), "create topic")
	topics, err := admin.ListTopics()
	must(err, "list topics")
	out.Partitions = topics[topic].NumPartitions
	entries, err := admin.DescribeConfig(sarama.ConfigResource{Type: sarama.TopicResource, Name: topic, ConfigNames: []string{"retention.ms", "cleanup.policy"}})
	must(err, "describe configs")
	for _, e := range entries {
		out.TopicConfig[e.Name] = e.Value
	}

	codecs := []sarama.CompressionCodec{sarama.CompressionNone, sarama.CompressionGZIP, sarama.CompressionSnappy, sarama.CompressionLZ4, sarama.CompressionZSTD}
	for c, codec := range codecs {
		pcfg := *cfg
		pcfg.Producer.Compression = codec
		producer, err := sarama.NewSyncProducer(bootstrap, &pcfg)
		must(err, "producer")
		batch := []*sarama.ProducerMessage{}
		for i := c * records / len(codecs); i < (c+1)*records/len(codecs); i++ {
			batch = append(batch, &sarama.ProducerMessage{Topic: topic, Key: sarama.StringEncoder(fmt.Sprint(i)), Value: sarama.StringEncoder(fmt.Sprintf("v%03d", i))})
		}
		must(producer.SendMessages(batch), "send "+codec.String())
		out.Produced += len(batch)
		out.Codecs = append(out.Codecs, codec.String())
		producer.Close()
	}

	h := &shared{seen: map[string]int{}, claims: map[int]int{}, done: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	groups := []sarama.ConsumerGroup{}
	for i := 0; i < 2; i++ {
		g, err := sarama.NewConsumerGroup(bootstrap, group, cfg)
		must(err, "consumer group")
		groups = append(groups, g)
		wg.Add(1)
		go func(id int) {
			defer wg.Done()
			for ctx.Err() == nil {
				if err := g.Consume(ctx, []string{topic}, member{h, id}); err != nil && ctx.Err() == nil {
					fmt.Fprintln(os.Stderr, "consume:", err)
					time.Sleep(100 * time.Millisecond)
				}
			}
		}(i)
	}
	select {
	case <-h.done:
	case <-time.After(60 * time.Second):
		fmt.Fprintf(os.Stderr, "consumed only %d of %d\n", len(h.seen), records)
		os.Exit(1)
	}
	time.Sleep(time.Second) // the last marks are committed (CommitInterval), then the members leave
	cancel()
	wg.Wait()
	for _, g := range groups {
		must(g.Close(), "close group")
	}
	out.Consumed = len(h.seen)
	for _, n := range h.seen {
		out.Duplicates += n - 1
	}
	for _, n := range h.claims {
		out.Members = append(out.Members, n)
	}
	sort.Ints(out.Members)

	described, err := admin.DescribeConsumerGroups([]string{group})
	must(err, "describe groups")
	out.GroupState = described[0].State
	offsets, err := admin.ListConsumerGroupOffsets(group, map[string][]int32{topic: {0, 1, 2}})
	must(err, "list group offsets")
	for p, block := range offsets.Blocks[topic] {
		out.Committed[p] = block.Offset
	}
	client, err := sarama.NewClient(bootstrap, cfg)
	must(err, "client")
	for p := int32(0); p < 3; p++ {
		end, err := client.GetOffset(topic, p, sarama.OffsetNewest)
		must(err, "end offset")
		out.EndOffsets[p] = end
	}
	client.Close()
	must(admin.DeleteTopic(topic), "delete topic")
	topics, err = admin.ListTopics()
	must(err, "list topics")
	_, still := topics[topic]
	out.Deleted = !still
	admin.Close()
	must(json.NewEncoder(os.Stdout).Encode(out), "json")
}
