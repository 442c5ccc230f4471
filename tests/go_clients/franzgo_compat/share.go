// A share-group member (KIP-932): franz-go's share consumer, implicit or explicit acknowledgement.
package main

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

type shareAck struct {
	Partition int32  `json:"partition"`
	Offset    int64  `json:"offset"`
	Kind      string `json:"kind"`
}

var ackKinds = map[string]kgo.AckStatus{"accept": kgo.AckAccept, "release": kgo.AckRelease, "reject": kgo.AckReject}

// share polls until stop. Implicit (no acks): each poll accepts the previous poll's records, and the
// last poll's are marked accepted before Close (franz-go's Close releases records left unmarked).
// Explicit: each record is acknowledged as the command says (a record it does not name: accept), and
// the acknowledgements are flushed after each poll; once every named record is acknowledged, the
// topic is paused (so that the client's background fetches acquire nothing more) and polling stops,
// the member staying in the group until stop.
func share(cmd command) {
	stop := untilStop()
	cl := client(cmd, kgo.ShareGroup(cmd.Group), kgo.ConsumeTopics(cmd.Topic), kgo.FetchMaxWait(200*time.Millisecond))
	type tp struct {
		p int32
		o int64
	}
	awaited := map[tp]string{}
	for _, a := range cmd.Acks {
		awaited[tp{a.Partition, a.Offset}] = a.Kind
	}
	explicit := cmd.Acks != nil
	for stop.Err() == nil {
		if explicit && len(cmd.Acks) > 0 && len(awaited) == 0 {
			<-stop.Done()
			break
		}
		fetches := cl.PollRecords(stop, 500)
		fetches.EachError(func(t string, p int32, err error) {
			if stop.Err() == nil {
				emit(map[string]any{"type": "error", "error": "share fetch: " + err.Error()})
			}
		})
		records := fetches.Records()
		for _, r := range records {
			emitRecord(r)
		}
		if !explicit || len(records) == 0 {
			continue
		}
		for _, r := range records {
			kind, named := awaited[tp{r.Partition, r.Offset}]
			if !named {
				kind = "accept"
			}
			r.Ack(ackKinds[kind])
			delete(awaited, tp{r.Partition, r.Offset})
		}
		if len(cmd.Acks) > 0 && len(awaited) == 0 {
			cl.PauseFetchTopics(cmd.Topic)
		}
		ctx, cancel := timeout()
		if err := cl.FlushAcks(ctx); err != nil {
			emit(map[string]any{"type": "error", "error": "flush acks: " + err.Error()})
		}
		cancel()
	}
	if !explicit {
		cl.MarkAcks(kgo.AckAccept)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := cl.LeaveGroupContext(ctx); err != nil {
		emit(map[string]any{"type": "error", "error": "leave: " + err.Error()})
	}
	cl.Close()
	emit(map[string]any{"type": "closed"})
}
