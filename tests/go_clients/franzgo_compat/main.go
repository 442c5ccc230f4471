// franzgo_compat is the franz-go driver of the compatibility matrix (tests/compat/clients/franzgo_client.py):
// one action per run, the command a JSON object in argv[1]; what the client saw goes to stdout as JSON
// lines; a consumer runs until it reads "stop" on stdin (or stdin closes), then closes its client.
package main

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// command is every field any action reads; each action uses its own few.
type command struct {
	Op              string            `json:"op"`
	Bootstrap       string            `json:"bootstrap"`
	Topic           string            `json:"topic"`
	Group           string            `json:"group"`
	Name            string            `json:"name"`
	Partitions      int32             `json:"partitions"`
	Start           string            `json:"start"`
	Assignor        string            `json:"assignor"`
	Protocol        string            `json:"protocol"`
	Codec           string            `json:"codec"`
	Records         []record          `json:"records"`
	Offsets         map[string]int64  `json:"offsets"`
	TransactionalID string            `json:"transactionalId"`
	Steps           []txnStep         `json:"steps"`
	Acks            []shareAck        `json:"acks"`
	ConfigName      string            `json:"configName"`
	ConfigValue     string            `json:"configValue"`
	Login           *login            `json:"login"`
	Extra           map[string]string `json:"extra"`
}

// record is one record as the Python side writes and reads it: bytes in base64, null kept null.
type record struct {
	Partition int32       `json:"partition"`
	Offset    int64       `json:"offset"`
	Key       *string     `json:"key"`
	Value     *string     `json:"value"`
	Headers   [][2]string `json:"headers"`
	Timestamp *int64      `json:"timestamp"`
	Delivery  int32       `json:"delivery,omitempty"`
}

var out = struct {
	sync.Mutex
	enc *json.Encoder
}{enc: json.NewEncoder(os.Stdout)}

func emit(event map[string]any) {
	out.Lock()
	defer out.Unlock()
	if err := out.enc.Encode(event); err != nil {
		os.Exit(3)
	}
}

func fail(what string, err error) {
	emit(map[string]any{"type": "error", "error": fmt.Sprintf("%s: %v", what, err)})
	os.Exit(1)
}

func must(err error, what string) {
	if err != nil {
		fail(what, err)
	}
}

func unb64(s *string) []byte {
	if s == nil {
		return nil
	}
	b, err := base64.StdEncoding.DecodeString(*s)
	must(err, "base64")
	if b == nil {
		b = []byte{}
	}
	return b
}

func b64(b []byte) *string {
	if b == nil {
		return nil
	}
	s := base64.StdEncoding.EncodeToString(b)
	return &s
}

func toKgo(topic string, r record) *kgo.Record {
	kr := &kgo.Record{Topic: topic, Partition: r.Partition, Key: unb64(r.Key), Value: unb64(r.Value)}
	for _, h := range r.Headers {
		v := h[1]
		kr.Headers = append(kr.Headers, kgo.RecordHeader{Key: h[0], Value: unb64(&v)})
	}
	if r.Timestamp != nil {
		kr.Timestamp = time.UnixMilli(*r.Timestamp)
	}
	return kr
}

func fromKgo(r *kgo.Record) record {
	got := record{Partition: r.Partition, Offset: r.Offset, Key: b64(r.Key), Value: b64(r.Value), Headers: [][2]string{}}
	for _, h := range r.Headers {
		v := ""
		if h.Value != nil {
			v = *b64(h.Value)
		}
		got.Headers = append(got.Headers, [2]string{h.Key, v})
	}
	ts := r.Timestamp.UnixMilli()
	got.Timestamp = &ts
	return got
}

func emitRecord(r *kgo.Record) {
	got := fromKgo(r)
	got.Delivery = r.DeliveryCount()
	var event map[string]any
	raw, _ := json.Marshal(got)
	_ = json.Unmarshal(raw, &event)
	event["type"] = "record"
	emit(event)
}

// untilStop returns a context cancelled once "stop" is read on stdin, or stdin closes.
func untilStop() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		defer cancel()
		lines := bufio.NewScanner(os.Stdin)
		for lines.Scan() {
			if strings.TrimSpace(lines.Text()) == "stop" {
				return
			}
		}
	}()
	return ctx
}

// base is what every client of this program sets: the bootstrap, a client id, quick reconnects.
func base(cmd command, extra ...kgo.Opt) []kgo.Opt {
	name := cmd.Name
	if name == "" {
		name = "franz-go-compat"
	}
	opts := []kgo.Opt{
		kgo.SeedBrokers(cmd.Bootstrap),
		kgo.ClientID(name),
		kgo.RetryBackoffFn(func(int) time.Duration { return 100 * time.Millisecond }),
	}
	if cmd.Login != nil {
		opts = append(opts, cmd.Login.opts()...)
	}
	return append(opts, extra...)
}

func client(cmd command, extra ...kgo.Opt) *kgo.Client {
	cl, err := kgo.NewClient(base(cmd, extra...)...)
	must(err, "new client")
	return cl
}

func timeout() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), 60*time.Second)
}

var ops = map[string]func(command){
	"metadata":         metadata,
	"create-topic":     createTopic,
	"delete-topic":     deleteTopic,
	"list-topics":      listTopics,
	"produce":          produce,
	"transaction":      transaction,
	"read":             read,
	"member":           member,
	"share":            share,
	"commit-fetch":     commitFetch,
	"describe-group":   describeGroup,
	"group-type":       groupType,
	"set-group-config": setGroupConfig,
	"old-protocol":     oldProtocol,
	"round-trip":       roundTrip,
	"login":            tryLogin,
}

func main() {
	var cmd command
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: franzgo_compat '{\"op\": ...}'")
		os.Exit(2)
	}
	must(json.Unmarshal([]byte(os.Args[1]), &cmd), "command")
	op, ok := ops[cmd.Op]
	if !ok {
		fail("command", fmt.Errorf("unknown op %q", cmd.Op))
	}
	op(cmd)
}
