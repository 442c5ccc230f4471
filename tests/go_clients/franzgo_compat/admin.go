// The admin actions, through kadm (and kmsg where kadm has no helper: GROUP configs).
package main

import (
	"fmt"
	"sort"
	"strconv"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func admin(cmd command) (*kadm.Client, *kgo.Client) {
	cl := client(cmd)
	return kadm.NewClient(cl), cl
}

func metadata(cmd command) {
	adm, cl := admin(cmd)
	defer cl.Close()
	ctx, cancel := timeout()
	defer cancel()
	md, err := adm.Metadata(ctx, cmd.Topic)
	must(err, "metadata")
	t := md.Topics[cmd.Topic]
	must(t.Err, "topic "+cmd.Topic)
	brokers := [][]any{}
	for _, b := range md.Brokers {
		brokers = append(brokers, []any{b.NodeID, b.Host, b.Port})
	}
	partitions := [][]int32{}
	for _, p := range t.Partitions.Sorted() {
		partitions = append(partitions, []int32{p.Partition, p.Leader})
	}
	emit(map[string]any{"type": "metadata", "clusterId": md.Cluster, "brokers": brokers, "partitions": partitions})
}

func createTopic(cmd command) {
	adm, cl := admin(cmd)
	defer cl.Close()
	ctx, cancel := timeout()
	defer cancel()
	resp, err := adm.CreateTopic(ctx, cmd.Partitions, 1, nil, cmd.Topic)
	must(err, "create topic")
	must(resp.Err, "create topic "+cmd.Topic)
	emit(map[string]any{"type": "created", "partitions": resp.NumPartitions})
}

func deleteTopic(cmd command) {
	adm, cl := admin(cmd)
	defer cl.Close()
	ctx, cancel := timeout()
	defer cancel()
	resp, err := adm.DeleteTopic(ctx, cmd.Topic)
	must(err, "delete topic")
	must(resp.Err, "delete topic "+cmd.Topic)
	emit(map[string]any{"type": "deleted"})
}

func listTopics(cmd command) {
	adm, cl := admin(cmd)
	defer cl.Close()
	ctx, cancel := timeout()
	defer cancel()
	topics, err := adm.ListTopics(ctx)
	must(err, "list topics")
	emit(map[string]any{"type": "topics", "topics": topics.Names()})
}

// commitFetch commits the offsets with kadm (metadata "meta-<partition>"), then reads them back with
// kadm's OffsetFetch and checks the metadata came back too.
func commitFetch(cmd command) {
	adm, cl := admin(cmd)
	defer cl.Close()
	ctx, cancel := timeout()
	defer cancel()
	offsets := kadm.Offsets{}
	for p, o := range cmd.Offsets {
		partition, err := strconv.Atoi(p)
		must(err, "partition")
		offsets.Add(kadm.Offset{Topic: cmd.Topic, Partition: int32(partition), At: o, LeaderEpoch: -1, Metadata: fmt.Sprintf("meta-%d", partition)})
	}
	must(adm.CommitAllOffsets(ctx, cmd.Group, offsets), "commit offsets")
	fetched, err := adm.FetchOffsets(ctx, cmd.Group)
	must(err, "fetch offsets")
	must(fetched.Error(), "fetch offsets")
	partitions := [][]any{}
	for _, o := range fetched.Sorted() {
		if o.Topic != cmd.Topic {
			continue
		}
		if want := fmt.Sprintf("meta-%d", o.Partition); o.Metadata != want {
			fail("fetch offsets", fmt.Errorf("partition %d metadata %q, committed %q", o.Partition, o.Metadata, want))
		}
		partitions = append(partitions, []any{o.Partition, o.At, o.Metadata})
	}
	emit(map[string]any{"type": "offsets", "partitions": partitions})
}

func describeGroup(cmd command) {
	adm, cl := admin(cmd)
	defer cl.Close()
	ctx, cancel := timeout()
	defer cancel()
	listed, err := adm.ListGroups(ctx)
	must(err, "list groups")
	_, isListed := listed[cmd.Group]
	described, err := adm.DescribeGroups(ctx, cmd.Group)
	must(err, "describe groups")
	g := described[cmd.Group]
	must(g.Err, "describe group "+cmd.Group)
	members := [][]any{}
	for _, m := range g.Members {
		assignment := map[string][]int32{}
		if c, ok := m.Assigned.AsConsumer(); ok {
			for _, t := range c.Topics {
				ps := append([]int32{}, t.Partitions...)
				sort.Slice(ps, func(i, j int) bool { return ps[i] < ps[j] })
				assignment[t.Topic] = ps
			}
		}
		members = append(members, []any{m.ClientID, assignment})
	}
	emit(map[string]any{
		"type": "group", "listed": isListed, "state": g.State, "protocolType": g.ProtocolType,
		"protocol": g.Protocol, "members": members,
	})
}

// groupType lists the group by type (ListGroups v5) and, for a consumer group, describes it with
// ConsumerGroupDescribe: the type it is listed as must be the only one, and describable as such.
func groupType(cmd command) {
	adm, cl := admin(cmd)
	defer cl.Close()
	ctx, cancel := timeout()
	defer cancel()
	as := []string{}
	for _, t := range []string{"consumer", "classic"} {
		listed, err := adm.ListGroupsByType(ctx, []string{t})
		must(err, "list groups by type")
		if g, ok := listed[cmd.Group]; ok {
			as = append(as, t)
			if g.GroupType != t {
				fail("list groups", fmt.Errorf("listed under %s with type %q", t, g.GroupType))
			}
		}
	}
	if len(as) != 1 {
		fail("list groups", fmt.Errorf("%s listed as %v", cmd.Group, as))
	}
	if as[0] == "consumer" {
		described, err := adm.DescribeConsumerGroups(ctx, cmd.Group)
		must(err, "describe consumer groups")
		must(described.Error(), "describe consumer groups")
	}
	emit(map[string]any{"type": "group-type", "groupType": as[0]})
}

// setGroupConfig sets a GROUP config with IncrementalAlterConfigs (kadm has helpers for topic and
// broker configs only).
func setGroupConfig(cmd command) {
	cl := client(cmd)
	defer cl.Close()
	ctx, cancel := timeout()
	defer cancel()
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	resource := kmsg.NewIncrementalAlterConfigsRequestResource()
	resource.ResourceType = kmsg.ConfigResourceTypeGroupConfig
	resource.ResourceName = cmd.Group
	config := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
	config.Name = cmd.ConfigName
	config.Op = kmsg.IncrementalAlterConfigOpSet
	config.Value = kmsg.StringPtr(cmd.ConfigValue)
	resource.Configs = append(resource.Configs, config)
	req.Resources = append(req.Resources, resource)
	resp, err := req.RequestWith(ctx, cl)
	must(err, "incremental alter configs")
	for _, r := range resp.Resources {
		must(kerr.ErrorForCode(r.ErrorCode), "group config "+cmd.ConfigName)
	}
	emit(map[string]any{"type": "configured"})
}
