// franzgo_admin walks franz-go's kadm surface against a broker (tests/go_clients/test_go_clients.py):
// topics, configs, partitions, offsets and records, groups, ACLs, SCRAM users, transactions and share
// groups. Each step records what kadm answered under a name; the JSON object of them all goes to
// stdout and the Python test asserts on it. Names are prefixed with argv[2], so that one broker can
// run it twice.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

var (
	seen      = map[string]any{}
	bootstrap string
	prefix    string
)

func note(name string, value any) { seen[name] = value }

func must(err error, what string) {
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", what, err)
		os.Exit(1)
	}
}

// code is the Kafka error name of err ("" for none), as kerr spells it.
func code(err error) string {
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return ke.Message
	}
	if err != nil {
		return "other: " + err.Error()
	}
	return ""
}

func newClient(opts ...kgo.Opt) *kgo.Client {
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(bootstrap), kgo.ClientID("franzgo-admin")}, opts...)...)
	must(err, "client")
	return cl
}

func main() {
	bootstrap, prefix = os.Args[1], os.Args[2]
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Second)
	defer cancel()
	cl := newClient()
	defer cl.Close()
	adm := kadm.NewClient(cl)
	a, b := prefix+"-a", prefix+"-b"

	cluster(ctx, adm)
	topics(ctx, adm, a, b)
	records(ctx, adm, a) // before configs makes the topic compacted: Kafka refuses DeleteRecords there
	configs(ctx, adm, a)
	groups(ctx, adm, a)
	acls(ctx, adm, a)
	scram(ctx, adm)
	transactions(ctx, adm, b)
	shareGroups(ctx, adm, cl, b)
	deleted, err := adm.DeleteTopics(ctx, a, b)
	must(err, "delete topics")
	must(deleted.Error(), "delete topics")
	listed := listTopics(ctx)
	note("topics.after_delete", listed.Has(a) || listed.Has(b))
	must(json.NewEncoder(os.Stdout).Encode(seen), "json")
}

// listTopics lists with a new client: kadm answers from its client's metadata cache (up to
// MetadataMinAge, 5 s), which would not show what this run just created or deleted.
func listTopics(ctx context.Context) kadm.TopicDetails {
	cl := newClient()
	defer cl.Close()
	listed, err := kadm.NewClient(cl).ListTopics(ctx)
	must(err, "list topics")
	return listed
}

func cluster(ctx context.Context, adm *kadm.Client) {
	brokers, err := adm.ListBrokers(ctx)
	must(err, "list brokers")
	note("brokers", len(brokers))
	versions, err := adm.ApiVersions(ctx)
	must(err, "api versions")
	for _, v := range versions.Sorted() {
		must(v.Err, "api versions")
		for _, key := range []kmsg.Key{kmsg.ConsumerGroupHeartbeat, kmsg.ShareGroupHeartbeat, kmsg.DescribeTransactions} {
			_, max, ok := v.KeyVersions(int16(key))
			note("api."+key.Name(), ok && max >= 0)
		}
	}
}

func topics(ctx context.Context, adm *kadm.Client, a, b string) {
	retention := "3600000"
	created, err := adm.CreateTopics(ctx, 3, 1, map[string]*string{"retention.ms": &retention}, a)
	must(err, "create topics")
	must(created.Error(), "create "+a)
	one, err := adm.CreateTopic(ctx, 1, 1, nil, b)
	must(err, "create topic")
	note("topics.create_b", code(one.Err))
	_, err = adm.CreateTopic(ctx, 1, 1, nil, a) // CreateTopic returns the topic's error
	note("topics.create_existing", code(err))
	validated, err := adm.ValidateCreateTopics(ctx, 2, 1, nil, prefix+"-validated")
	must(err, "validate create topics")
	note("topics.validate_only", code(validated.Error()))
	listed := listTopics(ctx)
	note("topics.listed", []bool{listed.Has(a), listed.Has(b), listed.Has(prefix + "-validated")})
	grown, err := adm.CreatePartitions(ctx, 2, a)
	must(err, "create partitions")
	must(grown.Error(), "create partitions")
	md, err := adm.Metadata(ctx, a, b)
	must(err, "metadata")
	note("topics.partitions", []int{len(md.Topics[a].Partitions), len(md.Topics[b].Partitions)})
	shrink, err := adm.UpdatePartitions(ctx, 2, a)
	must(err, "update partitions")
	note("topics.shrink", code(shrink.Error()))
}

func configs(ctx context.Context, adm *kadm.Client, a string) {
	value := func(name string) []string {
		described, err := adm.DescribeTopicConfigs(ctx, a)
		must(err, "describe topic configs")
		rc, err := described.On(a, nil)
		must(err, "describe "+a)
		for _, c := range rc.Configs {
			if c.Key == name {
				return []string{c.MaybeValue(), c.Source.String()}
			}
		}
		return nil
	}
	note("configs.retention_created", value("retention.ms"))
	note("configs.cleanup_default", value("cleanup.policy"))
	compact := "compact"
	altered, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{
		{Op: kadm.SetConfig, Name: "cleanup.policy", Value: &compact},
		{Op: kadm.DeleteConfig, Name: "retention.ms"},
	}, a)
	must(err, "alter topic configs")
	for _, r := range altered {
		must(r.Err, "alter topic configs")
	}
	note("configs.cleanup_altered", value("cleanup.policy"))
	note("configs.retention_deleted", value("retention.ms"))
	bad := "nonsense"
	refused, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "cleanup.policy", Value: &bad}}, a)
	must(err, "alter topic configs")
	note("configs.invalid_value", code(refused[0].Err))
	broker, err := adm.DescribeBrokerConfigs(ctx, 1)
	must(err, "describe broker configs")
	rc, err := broker.On("1", nil)
	must(err, "describe broker 1")
	for _, c := range rc.Configs {
		if c.Key == "log.retention.hours" || c.Key == "num.partitions" {
			note("configs.broker."+c.Key, c.MaybeValue())
		}
	}
}

func records(ctx context.Context, adm *kadm.Client, a string) {
	producer := newClient(kgo.DefaultProduceTopic(a), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	defer producer.Close()
	recs := []*kgo.Record{}
	for i := 0; i < 30; i++ {
		recs = append(recs, &kgo.Record{Partition: int32(i % 3), Key: []byte(fmt.Sprint(i)), Value: []byte(fmt.Sprint(i))})
	}
	must(producer.ProduceSync(ctx, recs...).FirstErr(), "produce")
	ends, err := adm.ListEndOffsets(ctx, a)
	must(err, "list end offsets")
	note("offsets.end", byPartition(ends))
	deleted, err := adm.DeleteRecords(ctx, kadm.Offsets{a: {0: {Topic: a, Partition: 0, At: 4}}})
	must(err, "delete records")
	must(deleted.Error(), "delete records")
	starts, err := adm.ListStartOffsets(ctx, a)
	must(err, "list start offsets")
	note("offsets.start", byPartition(starts))
	beyond, err := adm.DeleteRecords(ctx, kadm.Offsets{a: {1: {Topic: a, Partition: 1, At: 99}}})
	must(err, "delete records beyond")
	note("offsets.delete_beyond_end", code(beyond.Error()))
}

func byPartition(l kadm.ListedOffsets) map[int32]int64 {
	out := map[int32]int64{}
	l.Each(func(o kadm.ListedOffset) {
		must(o.Err, "listed offset")
		out[o.Partition] = o.Offset
	})
	return out
}

func groups(ctx context.Context, adm *kadm.Client, a string) {
	group := prefix + "-group"
	consumer := newClient(kgo.ConsumerGroup(group), kgo.ConsumeTopics(a), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.DisableAutoCommit(), kgo.FetchMaxWait(200*time.Millisecond))
	for got := 0; got < 26; { // 30 records, 4 deleted from partition 0
		fetches := consumer.PollFetches(ctx)
		must(fetches.Err(), "consume")
		got += fetches.NumRecords()
	}
	must(consumer.CommitUncommittedOffsets(ctx), "commit")
	described, err := adm.DescribeGroups(ctx, group)
	must(err, "describe groups")
	g := described[group]
	note("groups.live", []any{g.State, g.ProtocolType, g.Protocol, len(g.Members)})
	consumer.Close()
	listed, err := adm.ListGroups(ctx)
	must(err, "list groups")
	note("groups.listed", []string{listed[group].State, listed[group].ProtocolType})
	fetched, err := adm.FetchOffsets(ctx, group)
	must(err, "fetch offsets")
	committed := map[int32]int64{}
	fetched.Each(func(o kadm.OffsetResponse) { committed[o.Partition] = o.At })
	note("groups.committed", committed)
	lags, err := adm.Lag(ctx, group)
	must(err, "lag")
	note("groups.lag", lags[group].Lag.Total())
	must(adm.CommitAllOffsets(ctx, group, kadm.Offsets{a: {1: {Topic: a, Partition: 1, At: 2, LeaderEpoch: -1}}}), "commit offsets")
	removed, err := adm.DeleteOffsets(ctx, group, kadm.TopicsSet{a: {2: {}}})
	must(err, "delete offsets")
	must(removed.Error(), "delete offsets")
	fetched, err = adm.FetchOffsets(ctx, group)
	must(err, "fetch offsets")
	after := map[int32]int64{}
	fetched.Each(func(o kadm.OffsetResponse) { after[o.Partition] = o.At })
	note("groups.committed_after_alter", after)
	gone, err := adm.DeleteGroup(ctx, group)
	must(err, "delete group")
	note("groups.delete", code(gone.Err))
	described, err = adm.DescribeGroups(ctx, group)
	must(err, "describe groups")
	note("groups.after_delete", described[group].State)
}

func acls(ctx context.Context, adm *kadm.Client, a string) {
	b := kadm.NewACLs().Topics(a).ResourcePatternType(kadm.ACLPatternLiteral).Allow("User:alice").AllowHosts("*").Operations(kadm.OpRead, kadm.OpDescribe)
	created, err := adm.CreateACLs(ctx, b)
	must(err, "create acls")
	for _, c := range created {
		must(c.Err, "create acl")
	}
	note("acls.created", len(created))
	filter := kadm.NewACLs().Topics(a).ResourcePatternType(kadm.ACLPatternMatch).Allow().AllowHosts().Operations(kadm.OpAny)
	described, err := adm.DescribeACLs(ctx, filter)
	must(err, "describe acls")
	ops := []string{}
	for _, d := range described {
		must(d.Err, "describe acls")
		for _, e := range d.Described {
			ops = append(ops, fmt.Sprintf("%s %s %s", e.Principal, e.Operation, e.Permission))
		}
	}
	sort.Strings(ops)
	note("acls.described", ops)
	deleted, err := adm.DeleteACLs(ctx, filter)
	must(err, "delete acls")
	n := 0
	for _, d := range deleted {
		must(d.Err, "delete acls")
		n += len(d.Deleted)
	}
	note("acls.deleted", n)
	described, err = adm.DescribeACLs(ctx, filter)
	must(err, "describe acls")
	left := 0
	for _, d := range described {
		left += len(d.Described)
	}
	note("acls.after_delete", left)
}

func scram(ctx context.Context, adm *kadm.Client) {
	user := prefix + "-alice"
	sha256 := kadm.UpsertSCRAM{User: user, Mechanism: kadm.ScramSha256, Iterations: 4096, Password: "secret-256"}
	sha512 := kadm.UpsertSCRAM{User: user, Mechanism: kadm.ScramSha512, Iterations: 8192, Password: "secret-512"}
	both, err := adm.AlterUserSCRAMs(ctx, nil, []kadm.UpsertSCRAM{sha256, sha512})
	must(err, "alter scram")
	note("scram.one_user_twice_in_a_request", code(both.Error()))
	for _, upsert := range []kadm.UpsertSCRAM{sha256, sha512} {
		altered, err := adm.AlterUserSCRAMs(ctx, nil, []kadm.UpsertSCRAM{upsert})
		must(err, "alter scram")
		must(altered.Error(), "alter scram")
	}
	mechanisms := func() any {
		described, err := adm.DescribeUserSCRAMs(ctx, user)
		must(err, "describe scram")
		d := described[user]
		if d.Err != nil {
			return code(d.Err)
		}
		out := []string{}
		for _, c := range d.CredInfos {
			out = append(out, fmt.Sprintf("%s/%d", c.Mechanism, c.Iterations))
		}
		sort.Strings(out)
		return out
	}
	note("scram.upserted", mechanisms())
	altered, err := adm.AlterUserSCRAMs(ctx, []kadm.DeleteSCRAM{{User: user, Mechanism: kadm.ScramSha256}}, nil)
	must(err, "delete scram")
	must(altered.Error(), "delete scram")
	note("scram.after_delete", mechanisms())
	unknown, err := adm.DescribeUserSCRAMs(ctx, prefix+"-nobody")
	must(err, "describe unknown scram")
	note("scram.unknown_user", code(unknown[prefix+"-nobody"].Err))
}

func transactions(ctx context.Context, adm *kadm.Client, b string) {
	id := prefix + "-txn"
	producer := newClient(kgo.TransactionalID(id), kgo.DefaultProduceTopic(b))
	defer producer.Close()
	must(producer.BeginTransaction(), "begin")
	must(producer.ProduceSync(ctx, &kgo.Record{Value: []byte("in a transaction")}).FirstErr(), "produce")
	open, err := adm.DescribeTransactions(ctx, id)
	must(err, "describe transactions")
	t := open[id]
	must(t.Err, "describe transaction")
	note("txn.open", []any{t.State, t.Topics.Sorted()[0].Topic})
	listed, err := adm.ListTransactions(ctx, nil, []string{"Ongoing"})
	must(err, "list transactions")
	_, ok := listed[id]
	note("txn.listed_ongoing", ok)
	producers, err := adm.DescribeProducers(ctx, kadm.TopicsSet{b: {0: {}}})
	must(err, "describe producers")
	count := 0
	producers.EachProducer(func(p kadm.DescribedProducer) {
		if p.ProducerID == t.ProducerID {
			count++
			note("txn.producer_open", p.CurrentTxnStartOffset >= 0)
		}
	})
	note("txn.producers", count)
	must(producer.EndTransaction(ctx, kgo.TryCommit), "commit")
	deadline := time.Now().Add(30 * time.Second) // markers may follow EndTxn's answer, as in Kafka
	for {
		done, err := adm.DescribeTransactions(ctx, id)
		must(err, "describe transactions")
		if done[id].State == "CompleteCommit" || time.Now().After(deadline) {
			note("txn.committed", done[id].State)
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	unknown, err := adm.DescribeTransactions(ctx, prefix+"-no-such-txn")
	must(err, "describe unknown transaction")
	note("txn.unknown", code(unknown[prefix+"-no-such-txn"].Err))
}

func shareGroups(ctx context.Context, adm *kadm.Client, cl *kgo.Client, b string) {
	group := prefix + "-share"
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	res := kmsg.NewIncrementalAlterConfigsRequestResource()
	res.ResourceType, res.ResourceName = kmsg.ConfigResourceTypeGroupConfig, group
	cfg := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
	cfg.Name, cfg.Op, cfg.Value = "share.auto.offset.reset", kmsg.IncrementalAlterConfigOpSet, kmsg.StringPtr("earliest")
	res.Configs = append(res.Configs, cfg)
	req.Resources = append(req.Resources, res)
	resp, err := req.RequestWith(ctx, cl)
	must(err, "group config")
	must(kerr.ErrorForCode(resp.Resources[0].ErrorCode), "group config")

	member := newClient(kgo.ShareGroup(group), kgo.ConsumeTopics(b), kgo.FetchMaxWait(200*time.Millisecond))
	for got := 0; got < 1; {
		fetches := member.PollRecords(ctx, 10)
		must(fetches.Err(), "share poll")
		got += fetches.NumRecords()
	}
	member.MarkAcks(kgo.AckAccept)
	must(member.FlushAcks(ctx), "flush acks")
	described, err := adm.DescribeShareGroups(ctx, group)
	must(err, "describe share groups")
	d := described[group]
	must(d.Err, "describe share group")
	note("share.live", []any{d.GroupState, len(d.Members), d.Assignor})
	byType, err := adm.ListGroupsByType(ctx, []string{"share"})
	must(err, "list share groups")
	note("share.listed", byType[group].GroupType)
	member.Close()
	offsets := func() any {
		got, err := adm.DescribeShareGroupOffsets(ctx, group)
		must(err, "describe share group offsets")
		g := got[group]
		must(g.Err, "describe share group offsets")
		out := map[int32]int64{}
		for _, ps := range g.Offsets {
			for p, o := range ps {
				must(o.Err, "share offset")
				out[p] = o.StartOffset
			}
		}
		return out
	}
	// The member accepted record 0; offset 1 is the transaction's commit marker. Kafka 4.4 describes the
	// start offset as 0 after this (kafkito: 2), so only the partition's presence is recorded.
	after := offsets().(map[int32]int64)
	_, present := after[0]
	note("share.offsets_described", present)
	altered, err := adm.AlterShareGroupOffsets(ctx, group, kadm.Offsets{b: {0: {Topic: b, Partition: 0, At: 0}}})
	must(err, "alter share group offsets")
	must(altered.Error(), "alter share group offsets")
	note("share.offsets_altered", offsets())
	removed, err := adm.DeleteShareGroupOffsets(ctx, group, b)
	must(err, "delete share group offsets")
	must(removed.Error(), "delete share group offsets")
	note("share.offsets_deleted", offsets())
}
