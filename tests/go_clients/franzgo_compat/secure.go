// Logging in: TLS with the suite's CA, SASL PLAIN or SCRAM-SHA-512; a round trip, or a login that must fail.
package main

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

type login struct {
	CA        string `json:"ca"`
	Mechanism string `json:"mechanism"`
	User      string `json:"user"`
	Password  string `json:"password"`
}

func (l *login) opts() []kgo.Opt {
	var opts []kgo.Opt
	if l.CA != "" {
		pem, err := os.ReadFile(l.CA)
		must(err, "ca")
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			fail("ca", fmt.Errorf("no certificate in %s", l.CA))
		}
		opts = append(opts, kgo.DialTLSConfig(&tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}))
	}
	switch l.Mechanism {
	case "PLAIN":
		opts = append(opts, kgo.SASL(plain.Auth{User: l.User, Pass: l.Password}.AsMechanism()))
	case "SCRAM-SHA-512":
		opts = append(opts, kgo.SASL(scram.Auth{User: l.User, Pass: l.Password}.AsSha512Mechanism()))
	case "":
	default:
		fail("login", fmt.Errorf("unknown mechanism %q", l.Mechanism))
	}
	return opts
}

// roundTrip creates a topic, produces 10 records, consumes them in a group, commits, and reports the
// offset the group committed as kadm reads it back.
func roundTrip(cmd command) {
	ctx, cancel := timeout()
	defer cancel()
	adm, cl := admin(cmd)
	created, err := adm.CreateTopic(ctx, 1, 1, nil, cmd.Topic)
	must(err, "create topic")
	must(created.Err, "create topic")
	recs := []*kgo.Record{}
	for i := 0; i < 10; i++ {
		recs = append(recs, &kgo.Record{Topic: cmd.Topic, Value: []byte(fmt.Sprintf("record-%d", i))})
	}
	must(cl.ProduceSync(ctx, recs...).FirstErr(), "produce")
	consumer := client(cmd, kgo.ConsumerGroup(cmd.Group), kgo.ConsumeTopics(cmd.Topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DisableAutoCommit(), kgo.FetchMaxWait(200*time.Millisecond))
	for got := 0; got < 10; {
		fetches := consumer.PollFetches(ctx)
		must(fetches.Err(), "consume")
		got += fetches.NumRecords()
	}
	must(consumer.CommitUncommittedOffsets(ctx), "commit")
	consumer.Close()
	fetched, err := adm.FetchOffsets(ctx, cmd.Group)
	must(err, "fetch offsets")
	committed, _ := fetched.Lookup(cmd.Topic, 0)
	cl.Close()
	emit(map[string]any{"type": "round-trip", "committed": committed.At})
}

// tryLogin connects and asks for the cluster's metadata; what the client says about the refusal is
// the result.
func tryLogin(cmd command) {
	ctx, cancel := timeout()
	defer cancel()
	cl := client(cmd, kgo.RequestRetries(0), kgo.RetryTimeout(5*time.Second))
	defer cl.Close()
	_, err := kadm.NewClient(cl).BrokerMetadata(ctx)
	said := ""
	if err != nil {
		said = err.Error()
	}
	emit(map[string]any{"type": "login", "error": said})
}
