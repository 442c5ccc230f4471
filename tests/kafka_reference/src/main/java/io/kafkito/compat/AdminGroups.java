package io.kafkito.compat;

import static io.kafkito.compat.AdminCalls.each;
import static io.kafkito.compat.AdminCalls.error;
import static io.kafkito.compat.AdminCalls.get;
import static io.kafkito.compat.AdminCalls.operations;
import static io.kafkito.compat.AdminCalls.partitionsOf;
import static io.kafkito.compat.AdminCalls.sorted;
import static io.kafkito.compat.AdminCalls.stringList;
import static io.kafkito.compat.AdminCalls.tp;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.clients.admin.AbortTransactionSpec;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConsumerGroupOffsetsResult;
import org.apache.kafka.clients.admin.AlterShareGroupOffsetsResult;
import org.apache.kafka.clients.admin.ClassicGroupDescription;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.DeleteConsumerGroupOffsetsResult;
import org.apache.kafka.clients.admin.DeleteShareGroupOffsetsResult;
import org.apache.kafka.clients.admin.DescribeConsumerGroupsOptions;
import org.apache.kafka.clients.admin.DescribeProducersResult;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.clients.admin.ListConsumerGroupOffsetsSpec;
import org.apache.kafka.clients.admin.ListGroupsOptions;
import org.apache.kafka.clients.admin.ListShareGroupOffsetsSpec;
import org.apache.kafka.clients.admin.ListTransactionsOptions;
import org.apache.kafka.clients.admin.MemberDescription;
import org.apache.kafka.clients.admin.MemberToRemove;
import org.apache.kafka.clients.admin.ProducerState;
import org.apache.kafka.clients.admin.RemoveMembersFromConsumerGroupOptions;
import org.apache.kafka.clients.admin.RemoveMembersFromConsumerGroupResult;
import org.apache.kafka.clients.admin.ShareGroupDescription;
import org.apache.kafka.clients.admin.ShareMemberDescription;
import org.apache.kafka.clients.admin.SharePartitionOffsetInfo;
import org.apache.kafka.clients.admin.TransactionDescription;
import org.apache.kafka.clients.admin.TransactionListing;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.GroupState;
import org.apache.kafka.common.GroupType;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.clients.admin.TransactionState;

/** The Admin calls on groups (consumer, classic, share, streams) and transactions, as in AdminCalls. */
final class AdminGroups {
    private AdminGroups() {}

    /** The call's result, or null when it is not one of these. */
    static JsonNode call(Admin admin, String name, JsonNode a) throws Exception {
        switch (name) {
            case "listGroups": return listGroups(admin, a);
            case "listConsumerGroups": return listConsumerGroups(admin);
            case "describeConsumerGroups": return describeConsumerGroups(admin, a);
            case "describeClassicGroups": return describeClassicGroups(admin, a);
            case "deleteConsumerGroups":
                return each(admin.deleteConsumerGroups(stringList(a.path("groups"))).deletedGroups(), g -> g, AdminCalls::ok);
            case "listConsumerGroupOffsets": return listConsumerGroupOffsets(admin, a);
            case "alterConsumerGroupOffsets": return alterConsumerGroupOffsets(admin, a);
            case "deleteConsumerGroupOffsets": return deleteConsumerGroupOffsets(admin, a);
            case "removeMembersFromConsumerGroup": return removeMembers(admin, a);
            case "describeShareGroups": return describeShareGroups(admin, a);
            case "listShareGroupOffsets": return listShareGroupOffsets(admin, a);
            case "alterShareGroupOffsets": return alterShareGroupOffsets(admin, a);
            case "deleteShareGroupOffsets": return deleteShareGroupOffsets(admin, a);
            case "deleteShareGroups":
                return each(admin.deleteShareGroups(stringList(a.path("groups"))).deletedGroups(), g -> g, AdminCalls::ok);
            case "describeStreamsGroups":
                return each(admin.describeStreamsGroups(stringList(a.path("groups"))).describedGroups(), g -> g,
                        d -> Out.object().put("state", d.groupState().toString()));
            case "describeProducers": return describeProducers(admin, a);
            case "describeTransactions": return describeTransactions(admin, a);
            case "listTransactions": return listTransactions(admin, a);
            case "abortTransaction": return abortTransaction(admin, a);
            case "fenceProducers": return fenceProducers(admin, a);
            default: return null;
        }
    }

    private static ObjectNode listing(GroupListing g) {
        return Out.object().put("type", g.type().map(Object::toString).orElse(null))
                .put("protocol", g.protocol()).put("state", g.groupState().map(Object::toString).orElse(null))
                .put("simple", g.isSimpleConsumerGroup());
    }

    private static JsonNode listGroups(Admin admin, JsonNode a) throws Exception {
        ListGroupsOptions options = new ListGroupsOptions();
        if (a.has("types")) {
            Set<GroupType> types = new HashSet<>();
            a.path("types").forEach(t -> types.add(GroupType.parse(t.asText())));
            options.withTypes(types);
        }
        if (a.has("states")) {
            Set<GroupState> states = new HashSet<>();
            a.path("states").forEach(s -> states.add(GroupState.parse(s.asText())));
            options.inGroupStates(states);
        }
        if (a.has("protocolTypes")) {
            options.withProtocolTypes(new HashSet<>(stringList(a.path("protocolTypes"))));
        }
        ObjectNode out = Out.object();
        get(admin.listGroups(options).all()).forEach(g -> out.set(g.groupId(), listing(g)));
        return sorted(out);
    }

    @SuppressWarnings("deprecation")
    private static JsonNode listConsumerGroups(Admin admin) throws Exception {
        ObjectNode out = Out.object();
        get(admin.listConsumerGroups().all()).forEach(g -> out.set(g.groupId(), Out.object()
                .put("type", g.type().map(Object::toString).orElse(null))
                .put("state", g.groupState().map(Object::toString).orElse(null)).put("simple", g.isSimpleConsumerGroup())));
        return sorted(out);
    }

    private static ArrayNode members(Collection<MemberDescription> members) {
        ArrayNode out = Out.array();
        for (MemberDescription m : members) {
            ObjectNode o = Out.object().put("memberId", m.consumerId()).put("clientId", m.clientId())
                    .put("instanceId", m.groupInstanceId().orElse(null)).put("host", m.host());
            List<String> assigned = new ArrayList<>();
            m.assignment().topicPartitions().forEach(tp -> assigned.add(tp(tp)));
            o.set("assignment", AdminCalls.strings(assigned, s -> s));
            out.add(o);
        }
        return out;
    }

    private static JsonNode describeConsumerGroups(Admin admin, JsonNode a) {
        DescribeConsumerGroupsOptions options = new DescribeConsumerGroupsOptions()
                .includeAuthorizedOperations(a.path("authorizedOperations").asBoolean());
        return each(admin.describeConsumerGroups(stringList(a.path("groups")), options).describedGroups(), g -> g,
                (ConsumerGroupDescription d) -> {
                    ObjectNode o = Out.object().put("state", d.groupState().toString()).put("type", d.type().toString())
                            .put("assignor", d.partitionAssignor()).put("simple", d.isSimpleConsumerGroup())
                            .put("coordinator", d.coordinator() == null ? -1 : d.coordinator().id())
                            .put("groupEpoch", d.groupEpoch().orElse(-1))
                            .put("targetAssignmentEpoch", d.targetAssignmentEpoch().orElse(-1));
                    o.set("members", members(d.members()));
                    o.set("authorizedOperations", operations(d.authorizedOperations()));
                    return o;
                });
    }

    private static JsonNode describeClassicGroups(Admin admin, JsonNode a) {
        return each(admin.describeClassicGroups(stringList(a.path("groups"))).describedGroups(), g -> g,
                (ClassicGroupDescription d) -> {
                    ObjectNode o = Out.object().put("state", d.state().toString()).put("protocol", d.protocol())
                            .put("protocolData", d.protocolData()).put("simple", d.isSimpleConsumerGroup());
                    o.set("members", members(d.members()));
                    return o;
                });
    }

    private static JsonNode listConsumerGroupOffsets(Admin admin, JsonNode a) throws Exception {
        Map<String, ListConsumerGroupOffsetsSpec> specs = new HashMap<>();
        for (String g : stringList(a.path("groups"))) {
            ListConsumerGroupOffsetsSpec spec = new ListConsumerGroupOffsetsSpec();
            if (a.has("partitions")) {
                spec.topicPartitions(partitionsOf(a));
            }
            specs.put(g, spec);
        }
        Map<String, Map<TopicPartition, OffsetAndMetadata>> all = new HashMap<>();
        ObjectNode out = Out.object();
        for (String g : specs.keySet()) {
            try {
                Map<TopicPartition, OffsetAndMetadata> offsets = get(admin.listConsumerGroupOffsets(Map.of(g, specs.get(g)))
                        .partitionsToOffsetAndMetadata(g));
                ObjectNode byPartition = Out.object();
                offsets.forEach((tp, om) -> byPartition.set(tp(tp), om == null ? null
                        : Out.object().put("offset", om.offset()).put("metadata", om.metadata())
                                .put("leaderEpoch", om.leaderEpoch().orElse(-1))));
                out.set(g, sorted(byPartition));
            } catch (Exception e) {
                out.set(g, error(e));
            }
        }
        return out;
    }

    private static JsonNode alterConsumerGroupOffsets(Admin admin, JsonNode a) throws Exception {
        Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
        a.path("offsets").fields().forEachRemaining(e -> offsets.put(tp(a.path("topic"), e.getKey()),
                new OffsetAndMetadata(e.getValue().asLong(), "altered")));
        AlterConsumerGroupOffsetsResult r = admin.alterConsumerGroupOffsets(a.path("group").asText(), offsets);
        return perPartition(offsets.keySet(), tp -> r.partitionResult(tp), r.all());
    }

    private static JsonNode deleteConsumerGroupOffsets(Admin admin, JsonNode a) throws Exception {
        Set<TopicPartition> partitions = partitionsOf(a);
        DeleteConsumerGroupOffsetsResult r = admin.deleteConsumerGroupOffsets(a.path("group").asText(), partitions);
        return perPartition(partitions, tp -> r.partitionResult(tp), r.all());
    }

    /** A call whose results are by partition, and whose all() may fail as a whole (the group's error). */
    private static JsonNode perPartition(Collection<TopicPartition> partitions,
            java.util.function.Function<TopicPartition, org.apache.kafka.common.KafkaFuture<Void>> result,
            org.apache.kafka.common.KafkaFuture<Void> all) {
        ObjectNode out = Out.object();
        try {
            get(all);
            out.set("all", Out.object());
        } catch (Exception e) {
            out.set("all", error(e));
        }
        ObjectNode byPartition = Out.object();
        for (TopicPartition tp : partitions) {
            try {
                get(result.apply(tp));
                byPartition.set(tp(tp), Out.object());
            } catch (Exception e) {
                byPartition.set(tp(tp), error(e));
            }
        }
        out.set("partitions", sorted(byPartition));
        return out;
    }

    private static JsonNode removeMembers(Admin admin, JsonNode a) throws Exception {
        String group = a.path("group").asText();
        RemoveMembersFromConsumerGroupOptions options;
        List<MemberToRemove> members = new ArrayList<>();
        if (a.has("instances")) {
            stringList(a.path("instances")).forEach(i -> members.add(new MemberToRemove(i)));
            options = new RemoveMembersFromConsumerGroupOptions(members);
        } else {
            options = new RemoveMembersFromConsumerGroupOptions();
        }
        RemoveMembersFromConsumerGroupResult r = admin.removeMembersFromConsumerGroup(group, options);
        ObjectNode out = Out.object();
        try {
            get(r.all());
            out.set("all", Out.object());
        } catch (Exception e) {
            out.set("all", error(e));
        }
        ObjectNode byMember = Out.object();
        for (MemberToRemove m : members) {
            try {
                get(r.memberResult(m));
                byMember.set(m.groupInstanceId(), Out.object());
            } catch (Exception e) {
                byMember.set(m.groupInstanceId(), error(e));
            }
        }
        out.set("members", byMember);
        return out;
    }

    private static JsonNode describeShareGroups(Admin admin, JsonNode a) {
        return each(admin.describeShareGroups(stringList(a.path("groups"))).describedGroups(), g -> g,
                (ShareGroupDescription d) -> {
                    ObjectNode o = Out.object().put("state", d.groupState().toString())
                            .put("coordinator", d.coordinator() == null ? -1 : d.coordinator().id())
                            .put("groupEpoch", d.groupEpoch()).put("targetAssignmentEpoch", d.targetAssignmentEpoch());
                    ArrayNode members = o.putArray("members");
                    for (ShareMemberDescription m : d.members()) {
                        List<String> assigned = new ArrayList<>();
                        m.assignment().topicPartitions().forEach(tp -> assigned.add(tp(tp)));
                        ObjectNode mo = Out.object().put("clientId", m.clientId()).put("memberEpoch", m.memberEpoch());
                        mo.set("assignment", AdminCalls.strings(assigned, s -> s));
                        members.add(mo);
                    }
                    return o;
                });
    }

    private static JsonNode listShareGroupOffsets(Admin admin, JsonNode a) throws Exception {
        ListShareGroupOffsetsSpec spec = new ListShareGroupOffsetsSpec();
        if (a.has("partitions")) {
            spec.topicPartitions(partitionsOf(a));
        }
        String group = a.path("group").asText();
        Map<TopicPartition, SharePartitionOffsetInfo> offsets = get(admin.listShareGroupOffsets(Map.of(group, spec))
                .partitionsToOffsetInfo(group));
        ObjectNode out = Out.object();
        offsets.forEach((tp, info) -> out.set(tp(tp), info == null ? null
                : Out.object().put("startOffset", info.startOffset()).put("lag", info.lag().orElse(-1L))));
        return sorted(out);
    }

    private static JsonNode alterShareGroupOffsets(Admin admin, JsonNode a) throws Exception {
        Map<TopicPartition, Long> offsets = new HashMap<>();
        a.path("offsets").fields().forEachRemaining(e -> offsets.put(tp(a.path("topic"), e.getKey()), e.getValue().asLong()));
        AlterShareGroupOffsetsResult r = admin.alterShareGroupOffsets(a.path("group").asText(), offsets);
        return perPartition(offsets.keySet(), tp -> r.partitionResult(tp), r.all());
    }

    private static JsonNode deleteShareGroupOffsets(Admin admin, JsonNode a) throws Exception {
        List<String> topics = stringList(a.path("topics"));
        DeleteShareGroupOffsetsResult r = admin.deleteShareGroupOffsets(a.path("group").asText(), new HashSet<>(topics));
        ObjectNode out = Out.object();
        try {
            get(r.all());
            out.set("all", Out.object());
        } catch (Exception e) {
            out.set("all", error(e));
        }
        ObjectNode byTopic = Out.object();
        for (String t : topics) {
            try {
                get(r.topicResult(t));
                byTopic.set(t, Out.object());
            } catch (Exception e) {
                byTopic.set(t, error(e));
            }
        }
        out.set("topics", byTopic);
        return out;
    }

    private static JsonNode describeProducers(Admin admin, JsonNode a) throws Exception {
        Set<TopicPartition> partitions = partitionsOf(a);
        DescribeProducersResult r = admin.describeProducers(partitions);
        ObjectNode out = Out.object();
        for (TopicPartition tp : partitions) {
            try {
                ArrayNode producers = Out.array();
                for (ProducerState p : get(r.partitionResult(tp)).activeProducers()) {
                    producers.add(Out.object().put("producerId", p.producerId()).put("epoch", p.producerEpoch())
                            .put("lastSequence", p.lastSequence()).put("lastTimestamp", p.lastTimestamp())
                            .put("coordinatorEpoch", p.coordinatorEpoch().orElse(-1))
                            .put("txnStartOffset", p.currentTransactionStartOffset().orElse(-1)));
                }
                out.set(tp(tp), producers);
            } catch (Exception e) {
                out.set(tp(tp), error(e));
            }
        }
        return sorted(out);
    }

    private static ObjectNode transaction(TransactionDescription d) {
        ObjectNode o = Out.object().put("state", d.state().toString()).put("producerId", d.producerId())
                .put("epoch", d.producerEpoch()).put("timeoutMs", d.transactionTimeoutMs())
                .put("coordinator", d.coordinatorId()).put("started", d.transactionStartTimeMs().isPresent());
        List<String> partitions = new ArrayList<>();
        d.topicPartitions().forEach(tp -> partitions.add(tp(tp)));
        o.set("partitions", AdminCalls.strings(partitions, s -> s));
        return o;
    }

    private static JsonNode describeTransactions(Admin admin, JsonNode a) {
        List<String> ids = stringList(a.path("ids"));
        var r = admin.describeTransactions(ids);
        ObjectNode out = Out.object();
        for (String id : ids) {
            try {
                out.set(id, transaction(get(r.description(id))));
            } catch (Exception e) {
                out.set(id, error(e));
            }
        }
        return out;
    }

    private static JsonNode listTransactions(Admin admin, JsonNode a) throws Exception {
        ListTransactionsOptions options = new ListTransactionsOptions();
        if (a.has("states")) {
            List<TransactionState> states = new ArrayList<>();
            a.path("states").forEach(s -> states.add(TransactionState.parse(s.asText())));
            options.filterStates(states);
        }
        if (a.has("producerIds")) {
            List<Long> ids = new ArrayList<>();
            a.path("producerIds").forEach(p -> ids.add(p.asLong()));
            options.filterProducerIds(ids);
        }
        if (a.has("durationMs")) {
            options.filterOnDuration(a.path("durationMs").asLong());
        }
        if (a.has("pattern")) {
            options.filterOnTransactionalIdPattern(a.path("pattern").asText());
        }
        ObjectNode out = Out.object();
        for (TransactionListing l : get(admin.listTransactions(options).all())) {
            out.set(l.transactionalId(), Out.object().put("producerId", l.producerId()).put("state", l.state().toString()));
        }
        return sorted(out);
    }

    private static JsonNode abortTransaction(Admin admin, JsonNode a) throws Exception {
        AbortTransactionSpec spec = new AbortTransactionSpec(new TopicPartition(a.path("topic").asText(),
                a.path("partition").asInt()), a.path("producerId").asLong(), (short) a.path("epoch").asInt(),
                a.path("coordinatorEpoch").asInt());
        get(admin.abortTransaction(spec).all());
        return Out.object();
    }

    private static JsonNode fenceProducers(Admin admin, JsonNode a) {
        List<String> ids = stringList(a.path("ids"));
        var r = admin.fenceProducers(ids);
        ObjectNode out = Out.object();
        for (String id : ids) {
            try {
                get(r.fencedProducers().get(id));
                out.set(id, Out.object().put("producerId", get(r.producerId(id))).put("epoch", get(r.epochId(id))));
            } catch (Exception e) {
                out.set(id, error(e));
            }
        }
        return out;
    }
}
