// Consuming: a reader of assigned partitions, and a group member (classic or KIP-848) that commits
// synchronously after processing each poll.
package main

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// read consumes every partition from the start or from the end. The end offsets are listed with kadm
// first and consumed from exactly (ready: the position is known), instead of AtEnd(), whose
// resolution the client does not report.
func read(cmd command) {
	stop := untilStop()
	ctx, cancel := timeout()
	partitions := map[int32]kgo.Offset{}
	var ends kadm.ListedOffsets
	if cmd.Start == "latest" {
		adm, cl := admin(cmd)
		var err error
		ends, err = adm.ListEndOffsets(ctx, cmd.Topic)
		must(err, "list end offsets")
		must(ends.Error(), "list end offsets")
		cl.Close()
	}
	for p := int32(0); p < cmd.Partitions; p++ {
		partitions[p] = kgo.NewOffset().AtStart()
		if o, ok := ends.Lookup(cmd.Topic, p); ok {
			partitions[p] = kgo.NewOffset().At(o.Offset)
		}
	}
	cancel()
	cl := client(cmd, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{cmd.Topic: partitions}), kgo.FetchMaxWait(200*time.Millisecond))
	defer cl.Close()
	emit(map[string]any{"type": "ready"})
	poll(stop, cl, func() {})
	emit(map[string]any{"type": "closed"})
}

// poll hands each record to emitRecord until stop; after each poll that returned records, then.
func poll(stop context.Context, cl *kgo.Client, then func()) {
	for stop.Err() == nil {
		fetches := cl.PollFetches(stop)
		fetches.EachError(func(t string, p int32, err error) {
			if stop.Err() != nil {
				return
			}
			// An error of no topic is the client telling what it is retrying (the group session while the
			// broker restarts): a note; a partition's error that is not retriable fails the consumer.
			kind := "error"
			if t == "" || kerr.IsRetriable(err) {
				kind = "note"
			}
			emit(map[string]any{"type": kind, "error": fmt.Sprintf("fetch %s-%d: %v", t, p, err)})
		})
		fetches.EachRecord(emitRecord)
		then()
	}
}

func sorted(set map[int32]bool) []int32 {
	out := []int32{}
	for p, in := range set {
		if in {
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// member joins the group (the classic protocol with the named assignor, or KIP-848's with the
// broker's uniform assignor) and commits what it processed after each poll, before it lets a
// rebalance go on (BlockRebalanceOnPoll): no record is processed twice or lost across rebalances.
func member(cmd command) {
	stop := untilStop()
	var mu sync.Mutex
	owned := map[int32]bool{}
	incremental := cmd.Protocol == "consumer"
	assigned := func(_ context.Context, _ *kgo.Client, got map[string][]int32) {
		mu.Lock()
		defer mu.Unlock()
		for _, p := range got[cmd.Topic] {
			owned[p] = true
		}
		emit(map[string]any{"type": "assigned", "partitions": sorted(owned)})
	}
	revoked := func(_ context.Context, _ *kgo.Client, lost map[string][]int32) {
		mu.Lock()
		defer mu.Unlock()
		if len(lost[cmd.Topic]) == 0 {
			return
		}
		for _, p := range lost[cmd.Topic] {
			owned[p] = false
		}
		event := map[string]any{"type": "revoked", "partitions": lost[cmd.Topic]}
		if incremental {
			event["owned"] = sorted(owned)
		}
		emit(event)
	}
	opts := []kgo.Opt{
		kgo.ConsumerGroup(cmd.Group),
		kgo.ConsumeTopics(cmd.Topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.DisableAutoCommit(),
		kgo.BlockRebalanceOnPoll(),
		kgo.FetchMaxWait(200 * time.Millisecond),
		kgo.OnPartitionsAssigned(assigned),
		kgo.OnPartitionsRevoked(revoked),
		kgo.OnPartitionsLost(revoked),
	}
	if incremental {
		opts = append(opts, kgo.ServerSideBalancer()) // the default balancer, cooperative-sticky: "uniform"
	} else {
		balancer := kgo.RangeBalancer()
		if cmd.Assignor == "roundrobin" {
			balancer = kgo.RoundRobinBalancer()
		}
		opts = append(opts, kgo.Balancers(balancer), kgo.SessionTimeout(15*time.Second), kgo.HeartbeatInterval(500*time.Millisecond))
	}
	cl := client(cmd, opts...)
	poll(stop, cl, func() {
		ctx, cancel := timeout()
		defer cancel()
		if err := cl.CommitUncommittedOffsets(ctx); err != nil {
			emit(map[string]any{"type": "error", "error": "commit: " + err.Error()})
		}
		cl.AllowRebalance()
	})
	cl.Close() // leaves the group
	emit(map[string]any{"type": "closed"})
}
