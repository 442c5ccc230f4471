// Producing: plain, transactional, and as a Kafka 0.10 client (message format v1).
package main

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)

var codecs = map[string]kgo.CompressionCodec{
	"none": kgo.NoCompression(), "gzip": kgo.GzipCompression(), "snappy": kgo.SnappyCompression(),
	"lz4": kgo.Lz4Compression(), "zstd": kgo.ZstdCompression(),
}

func codec(name string) kgo.CompressionCodec {
	if name == "" {
		name = "none"
	}
	c, ok := codecs[name]
	if !ok {
		fail("codec", fmt.Errorf("unknown codec %q", name))
	}
	return c
}

// sendAll buffers every record (a long linger holds each partition's in one batch) and flushes: the
// client sends a batch uncompressed when compressing it does not make it smaller, which a batch of a
// few small records can cause.
func sendAll(ctx context.Context, cl *kgo.Client, topic string, recs []record) {
	errs := make(chan error, len(recs))
	for _, r := range recs {
		cl.Produce(ctx, toKgo(topic, r), func(_ *kgo.Record, err error) { errs <- err })
	}
	must(cl.Flush(ctx), "flush")
	for range recs {
		must(<-errs, "produce")
	}
}

func producerOpts(cmd command) []kgo.Opt {
	return []kgo.Opt{
		kgo.DefaultProduceTopic(cmd.Topic),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerBatchCompression(codec(cmd.Codec)),
		kgo.ProducerLinger(time.Second),
		kgo.RequiredAcks(kgo.AllISRAcks()),
	}
}

func produce(cmd command) {
	cl := client(cmd, producerOpts(cmd)...)
	defer cl.Close()
	ctx, cancel := timeout()
	defer cancel()
	sendAll(ctx, cl, cmd.Topic, cmd.Records)
	emit(map[string]any{"type": "produced"})
}

type txnStep struct {
	Records []record         `json:"records"`
	Commit  bool             `json:"commit"`
	Group   *string          `json:"group"`
	Offsets map[string]int64 `json:"offsets"`
}

// transaction runs one transaction per step with one transactional client. franz-go sends offsets to
// a transaction only from a GroupTransactSession (a member of the group committing what it consumed),
// so a step's offsets for a group nobody joined go as the requests Kafka's sendOffsetsToTransaction
// makes: AddOffsetsToTxn, then TxnOffsetCommit with the client's producer id and epoch (kmsg).
func transaction(cmd command) {
	opts := append(producerOpts(cmd), kgo.TransactionalID(cmd.TransactionalID), kgo.TransactionTimeout(60*time.Second))
	cl := client(cmd, opts...)
	defer cl.Close()
	ctx, cancel := timeout()
	defer cancel()
	for i, step := range cmd.Steps {
		must(cl.BeginTransaction(), "begin transaction")
		sendAll(ctx, cl, cmd.Topic, step.Records)
		if step.Group != nil && len(step.Offsets) > 0 {
			sendOffsets(ctx, cl, cmd, *step.Group, step.Offsets)
		}
		end := kgo.TryAbort
		if step.Commit {
			end = kgo.TryCommit
		}
		must(cl.EndTransaction(ctx, end), fmt.Sprintf("end transaction %d", i))
		emit(map[string]any{"type": "transaction", "commit": step.Commit})
	}
}

func sendOffsets(ctx context.Context, cl *kgo.Client, cmd command, group string, offsets map[string]int64) {
	id, epoch, err := cl.ProducerID(ctx)
	must(err, "producer id")
	add := kmsg.NewPtrAddOffsetsToTxnRequest()
	add.TransactionalID, add.ProducerID, add.ProducerEpoch, add.Group = cmd.TransactionalID, id, epoch, group
	added, err := add.RequestWith(ctx, cl)
	must(err, "add offsets to txn")
	must(kerr.ErrorForCode(added.ErrorCode), "add offsets to txn")
	commit := kmsg.NewPtrTxnOffsetCommitRequest()
	commit.TransactionalID, commit.Group, commit.ProducerID, commit.ProducerEpoch = cmd.TransactionalID, group, id, epoch
	commit.Generation = -1
	topic := kmsg.NewTxnOffsetCommitRequestTopic()
	topic.Topic = cmd.Topic                     // v0-v5
	topic.TopicID = topicID(ctx, cl, cmd.Topic) // v6+ (KIP-1319) names topics by id only
	for p, o := range offsets {
		partition, err := strconv.Atoi(p)
		must(err, "partition")
		tp := kmsg.NewTxnOffsetCommitRequestTopicPartition()
		tp.Partition, tp.Offset, tp.LeaderEpoch = int32(partition), o, -1
		topic.Partitions = append(topic.Partitions, tp)
	}
	commit.Topics = append(commit.Topics, topic)
	committed, err := commit.RequestWith(ctx, cl)
	must(err, "txn offset commit")
	for _, t := range committed.Topics {
		for _, p := range t.Partitions {
			must(kerr.ErrorForCode(p.ErrorCode), fmt.Sprintf("txn offset commit %s-%d", t.Topic, p.Partition))
		}
	}
}

// oldProtocol pins the client to Kafka 0.10.0's versions (Produce v2: message format v1; Fetch v2),
// produces the records, and reads every partition back from the start.
func oldProtocol(cmd command) {
	old := kgo.MaxVersions(kversion.V0_10_0())
	producer := client(cmd, append(producerOpts(cmd), old)...)
	ctx, cancel := timeout()
	defer cancel()
	sendAll(ctx, producer, cmd.Topic, cmd.Records)
	producer.Close()
	partitions := map[int32]kgo.Offset{}
	for _, r := range cmd.Records {
		partitions[r.Partition] = kgo.NewOffset().AtStart()
	}
	consumer := client(cmd, old, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{cmd.Topic: partitions}))
	defer consumer.Close()
	for got := 0; got < len(cmd.Records); {
		fetches := consumer.PollFetches(ctx)
		if ctx.Err() != nil {
			fail("old protocol", fmt.Errorf("read %d of %d records", got, len(cmd.Records)))
		}
		fetches.EachError(func(t string, p int32, err error) { fail(fmt.Sprintf("fetch %s-%d", t, p), err) })
		fetches.EachRecord(func(r *kgo.Record) {
			emitRecord(r)
			got++
		})
	}
}

// topicID asks the broker for a topic's id (a TxnOffsetCommit from v6 names its topics by id).
func topicID(ctx context.Context, cl *kgo.Client, name string) [16]byte {
	req := kmsg.NewPtrMetadataRequest()
	t := kmsg.NewMetadataRequestTopic()
	t.Topic = kmsg.StringPtr(name)
	req.Topics = append(req.Topics, t)
	resp, err := req.RequestWith(ctx, cl)
	must(err, "metadata")
	if len(resp.Topics) != 1 {
		must(fmt.Errorf("metadata answered %d topics for %s", len(resp.Topics), name), "metadata")
	}
	must(kerr.ErrorForCode(resp.Topics[0].ErrorCode), "metadata "+name)
	return resp.Topics[0].TopicID
}
