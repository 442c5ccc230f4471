package io.kafkito.compat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.AlterConfigsOptions;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.CreateDelegationTokenOptions;
import org.apache.kafka.clients.admin.CreateTopicsOptions;
import org.apache.kafka.clients.admin.CreateTopicsResult;
import org.apache.kafka.clients.admin.DescribeClusterOptions;
import org.apache.kafka.clients.admin.DescribeClusterResult;
import org.apache.kafka.clients.admin.DescribeDelegationTokenOptions;
import org.apache.kafka.clients.admin.DescribeTopicsOptions;
import org.apache.kafka.clients.admin.FeatureMetadata;
import org.apache.kafka.clients.admin.FeatureUpdate;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.ListTopicsOptions;
import org.apache.kafka.clients.admin.LogDirDescription;
import org.apache.kafka.clients.admin.NewPartitionReassignment;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.PartitionReassignment;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.admin.ReplicaInfo;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.admin.UpdateFeaturesOptions;
import org.apache.kafka.common.ElectionType;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicCollection;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.TopicPartitionReplica;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.config.ConfigResource;

/**
 * Admin methods called as a Java user calls them, for tests/java_admin: each call takes its arguments as
 * JSON and answers what the client returned, as JSON. A failure of one item of a call (a topic, a
 * partition, a group) is that item's {"error": exception class, "message": ...}; a failure of the whole
 * call is the command's error. Group, share-group, transaction and security calls are in AdminGroups and
 * AdminSecurity.
 */
final class AdminCalls {
    static final long TIMEOUT_S = 30;

    private AdminCalls() {}

    static JsonNode call(Admin admin, String name, JsonNode a) throws Exception {
        switch (name) {
            case "createTopics": return createTopics(admin, a);
            case "deleteTopics": return deleteTopics(admin, a);
            case "listTopics": return listTopics(admin, a);
            case "describeTopics": return describeTopics(admin, a);
            case "describeCluster": return describeCluster(admin, a);
            case "describeConfigs": return describeConfigs(admin, a);
            case "incrementalAlterConfigs": return incrementalAlterConfigs(admin, a);
            case "createPartitions": return createPartitions(admin, a);
            case "deleteRecords": return deleteRecords(admin, a);
            case "listOffsets": return listOffsets(admin, a);
            case "describeLogDirs": return describeLogDirs(admin, a);
            case "describeReplicaLogDirs": return describeReplicaLogDirs(admin, a);
            case "alterReplicaLogDirs": return alterReplicaLogDirs(admin, a);
            case "describeFeatures": return describeFeatures(admin);
            case "updateFeatures": return updateFeatures(admin, a);
            case "electLeaders": return electLeaders(admin, a);
            case "alterPartitionReassignments": return alterPartitionReassignments(admin, a);
            case "listPartitionReassignments": return listPartitionReassignments(admin, a);
            case "describeMetadataQuorum":
                return Out.object().put("leaderId",
                        admin.describeMetadataQuorum().quorumInfo().get(TIMEOUT_S, TimeUnit.SECONDS).leaderId());
            case "listConfigResources":
                return strings(admin.listConfigResources().all().get(TIMEOUT_S, TimeUnit.SECONDS), Object::toString);
            case "createDelegationToken":
                admin.createDelegationToken(new CreateDelegationTokenOptions()).delegationToken()
                        .get(TIMEOUT_S, TimeUnit.SECONDS);
                return Out.object();
            case "describeDelegationToken":
                admin.describeDelegationToken(new DescribeDelegationTokenOptions()).delegationTokens()
                        .get(TIMEOUT_S, TimeUnit.SECONDS);
                return Out.object();
            case "renewDelegationToken":
                admin.renewDelegationToken(new byte[] {1, 2, 3}).expiryTimestamp().get(TIMEOUT_S, TimeUnit.SECONDS);
                return Out.object();
            case "expireDelegationToken":
                admin.expireDelegationToken(new byte[] {1, 2, 3}).expiryTimestamp().get(TIMEOUT_S, TimeUnit.SECONDS);
                return Out.object();
            case "unregisterBroker":
                admin.unregisterBroker(a.path("broker").asInt()).all().get(TIMEOUT_S, TimeUnit.SECONDS);
                return Out.object();
            default:
                JsonNode groups = AdminGroups.call(admin, name, a);
                return groups != null ? groups : AdminSecurity.call(admin, name, a);
        }
    }

    // -- helpers shared by the Admin call classes ----------------------------------------------------------

    static <T> T get(KafkaFuture<T> f) throws Exception {
        return f.get(TIMEOUT_S, TimeUnit.SECONDS);
    }

    static ObjectNode error(Throwable e) {
        Throwable cause = Errors.unwrap(e);
        return Out.object().put("error", cause.getClass().getSimpleName()).put("message", cause.getMessage());
    }

    /** Each future of a call's per-item results, by its key's name: converted, or its error. */
    static <K, V> ObjectNode each(Map<K, KafkaFuture<V>> futures, Function<K, String> key,
            ThrowingFunction<V, JsonNode> convert) {
        ObjectNode out = Out.object();
        for (Map.Entry<K, KafkaFuture<V>> e : new ArrayList<>(futures.entrySet())) {
            try {
                out.set(key.apply(e.getKey()), convert.apply(get(e.getValue())));
            } catch (Exception ex) {
                out.set(key.apply(e.getKey()), error(ex));
            }
        }
        return sorted(out);
    }

    static ObjectNode sorted(ObjectNode o) {
        TreeMap<String, JsonNode> byName = new TreeMap<>();
        o.fields().forEachRemaining(e -> byName.put(e.getKey(), e.getValue()));
        ObjectNode out = Out.object();
        byName.forEach(out::set);
        return out;
    }

    interface ThrowingFunction<A, B> {
        B apply(A a) throws Exception;
    }

    static JsonNode ok(Object ignored) {
        return Out.object();
    }

    static String tp(TopicPartition tp) {
        return tp.topic() + "-" + tp.partition();
    }

    static TopicPartition tp(JsonNode topic, String partition) {
        return new TopicPartition(topic.asText(), Integer.parseInt(partition));
    }

    static <T> ArrayNode strings(Collection<T> items, Function<T, String> name) {
        ArrayNode out = Out.array();
        items.stream().map(name).sorted().forEach(out::add);
        return out;
    }

    static ArrayNode ints(Collection<Integer> items) {
        ArrayNode out = Out.array();
        items.forEach(out::add);
        return out;
    }

    static List<String> stringList(JsonNode array) {
        List<String> out = new ArrayList<>();
        array.forEach(n -> out.add(n.asText()));
        return out;
    }

    static Set<TopicPartition> partitionsOf(JsonNode a) {
        Set<TopicPartition> out = new HashSet<>();
        for (JsonNode p : a.path("partitions")) {
            out.add(new TopicPartition(a.path("topic").asText(), p.asInt()));
        }
        return out;
    }

    static ArrayNode operations(Set<AclOperation> ops) {
        return ops == null ? null : strings(ops, Object::toString);
    }

    static ConfigResource resource(JsonNode r) {
        return new ConfigResource(ConfigResource.Type.valueOf(r.path("type").asText()), r.path("name").asText());
    }

    // -- topics ------------------------------------------------------------------------------------------

    private static JsonNode createTopics(Admin admin, JsonNode a) throws Exception {
        List<NewTopic> topics = new ArrayList<>();
        for (JsonNode t : a.path("topics")) {
            Optional<Integer> partitions = t.has("partitions") ? Optional.of(t.path("partitions").asInt()) : Optional.empty();
            Optional<Short> rf = t.has("replicationFactor")
                    ? Optional.of((short) t.path("replicationFactor").asInt()) : Optional.empty();
            NewTopic nt = new NewTopic(t.path("name").asText(), partitions, rf);
            Map<String, String> configs = new HashMap<>();
            t.path("configs").fields().forEachRemaining(e -> configs.put(e.getKey(), e.getValue().asText()));
            topics.add(nt.configs(configs));
        }
        CreateTopicsResult result = admin.createTopics(topics,
                new CreateTopicsOptions().validateOnly(a.path("validateOnly").asBoolean()));
        ObjectNode out = Out.object();
        for (NewTopic t : topics) {
            String name = t.name();
            try {
                get(result.values().get(name));
                ObjectNode o = Out.object().put("numPartitions", get(result.numPartitions(name)))
                        .put("replicationFactor", get(result.replicationFactor(name)))
                        .put("hasTopicId", !Uuid.ZERO_UUID.equals(get(result.topicId(name))));
                Config config = get(result.config(name));
                ObjectNode configs = Out.object();
                for (String c : stringList(a.path("showConfigs"))) {
                    ConfigEntry e = config.get(c);
                    configs.put(c, e == null ? null : e.value());
                }
                o.set("configs", configs);
                out.set(name, o);
            } catch (Exception e) {
                out.set(name, error(e));
            }
        }
        return out;
    }

    private static JsonNode deleteTopics(Admin admin, JsonNode a) {
        if (a.has("ids")) {
            List<Uuid> ids = new ArrayList<>();
            a.path("ids").forEach(n -> ids.add(Uuid.fromString(n.asText())));
            return each(admin.deleteTopics(TopicCollection.ofTopicIds(ids)).topicIdValues(), Uuid::toString,
                    AdminCalls::ok);
        }
        return each(admin.deleteTopics(TopicCollection.ofTopicNames(stringList(a.path("topics")))).topicNameValues(),
                n -> n, AdminCalls::ok);
    }

    private static JsonNode listTopics(Admin admin, JsonNode a) throws Exception {
        ListTopicsOptions options = new ListTopicsOptions().listInternal(a.path("internal").asBoolean());
        ObjectNode out = Out.object();
        get(admin.listTopics(options).listings()).forEach(l -> out.put(l.name(), l.isInternal()));
        return sorted(out);
    }

    static ObjectNode topicDescription(TopicDescription d) {
        ObjectNode o = Out.object().put("name", d.name()).put("internal", d.isInternal())
                .put("topicId", d.topicId().toString());
        ArrayNode partitions = o.putArray("partitions");
        for (TopicPartitionInfo p : d.partitions()) {
            ObjectNode po = Out.object().put("partition", p.partition())
                    .put("leader", p.leader() == null ? -1 : p.leader().id());
            po.set("replicas", ints(p.replicas().stream().map(Node::id).toList()));
            po.set("isr", ints(p.isr().stream().map(Node::id).toList()));
            partitions.add(po);
        }
        o.set("authorizedOperations", operations(d.authorizedOperations()));
        return o;
    }

    private static JsonNode describeTopics(Admin admin, JsonNode a) {
        DescribeTopicsOptions options = new DescribeTopicsOptions()
                .includeAuthorizedOperations(a.path("authorizedOperations").asBoolean());
        if (a.has("ids")) {
            List<Uuid> ids = new ArrayList<>();
            a.path("ids").forEach(n -> ids.add(Uuid.fromString(n.asText())));
            return each(admin.describeTopics(TopicCollection.ofTopicIds(ids), options).topicIdValues(),
                    Uuid::toString, AdminCalls::topicDescription);
        }
        return each(admin.describeTopics(TopicCollection.ofTopicNames(stringList(a.path("topics"))), options)
                .topicNameValues(), n -> n, AdminCalls::topicDescription);
    }

    private static JsonNode describeCluster(Admin admin, JsonNode a) throws Exception {
        DescribeClusterResult r = admin.describeCluster(new DescribeClusterOptions()
                .includeAuthorizedOperations(a.path("authorizedOperations").asBoolean()));
        ObjectNode out = Out.object().put("clusterId", get(r.clusterId()));
        Node controller = get(r.controller());
        out.put("controller", controller == null ? -1 : controller.id());
        ArrayNode nodes = out.putArray("nodes");
        for (Node n : get(r.nodes())) {
            nodes.add(Out.object().put("id", n.id()).put("host", n.host()).put("port", n.port()).put("rack", n.rack()));
        }
        out.set("authorizedOperations", operations(get(r.authorizedOperations())));
        return out;
    }

    // -- configs -----------------------------------------------------------------------------------------

    private static JsonNode describeConfigs(Admin admin, JsonNode a) {
        List<ConfigResource> resources = new ArrayList<>();
        a.path("resources").forEach(r -> resources.add(resource(r)));
        List<String> names = stringList(a.path("names"));
        return each(admin.describeConfigs(resources).values(), r -> r.type() + ":" + r.name(), config -> {
            ObjectNode entries = Out.object();
            for (ConfigEntry e : config.entries()) {
                if (!names.isEmpty() && !names.contains(e.name())) {
                    continue;
                }
                entries.set(e.name(), Out.object().put("value", e.value()).put("source", e.source().toString())
                        .put("readOnly", e.isReadOnly()).put("sensitive", e.isSensitive()));
            }
            return Out.object().put("count", config.entries().size()).set("entries", sorted(entries));
        });
    }

    private static JsonNode incrementalAlterConfigs(Admin admin, JsonNode a) {
        Map<ConfigResource, Collection<AlterConfigOp>> changes = new HashMap<>();
        for (JsonNode r : a.path("resources")) {
            List<AlterConfigOp> ops = new ArrayList<>();
            for (JsonNode op : r.path("ops")) {
                ops.add(new AlterConfigOp(new ConfigEntry(op.path("name").asText(),
                        op.path("value").isNull() ? null : op.path("value").asText()),
                        AlterConfigOp.OpType.valueOf(op.path("op").asText())));
            }
            changes.put(resource(r), ops);
        }
        return each(admin.incrementalAlterConfigs(changes,
                new AlterConfigsOptions().validateOnly(a.path("validateOnly").asBoolean())).values(),
                r -> r.type() + ":" + r.name(), AdminCalls::ok);
    }

    // -- partitions, records, offsets, log dirs -----------------------------------------------------------

    private static JsonNode createPartitions(Admin admin, JsonNode a) {
        Map<String, NewPartitions> counts = new HashMap<>();
        a.path("counts").fields().forEachRemaining(e -> counts.put(e.getKey(), NewPartitions.increaseTo(e.getValue().asInt())));
        return each(admin.createPartitions(counts).values(), n -> n, AdminCalls::ok);
    }

    private static JsonNode deleteRecords(Admin admin, JsonNode a) {
        Map<TopicPartition, RecordsToDelete> before = new HashMap<>();
        a.path("offsets").fields().forEachRemaining(e -> before.put(tp(a.path("topic"), e.getKey()),
                RecordsToDelete.beforeOffset(e.getValue().asLong())));
        return each(admin.deleteRecords(before).lowWatermarks(), AdminCalls::tp,
                d -> Out.object().put("lowWatermark", d.lowWatermark()));
    }

    private static OffsetSpec spec(String s) {
        switch (s) {
            case "earliest": return OffsetSpec.earliest();
            case "latest": return OffsetSpec.latest();
            case "maxTimestamp": return OffsetSpec.maxTimestamp();
            case "earliestLocal": return OffsetSpec.earliestLocal();
            case "latestTiered": return OffsetSpec.latestTiered();
            case "earliestPendingUpload": return OffsetSpec.earliestPendingUpload();
            default: return OffsetSpec.forTimestamp(Long.parseLong(s));
        }
    }

    private static JsonNode listOffsets(Admin admin, JsonNode a) throws Exception {
        Map<TopicPartition, OffsetSpec> specs = new HashMap<>();
        a.path("specs").fields().forEachRemaining(e -> specs.put(tp(a.path("topic"), e.getKey()), spec(e.getValue().asText())));
        IsolationLevel isolation = a.path("readCommitted").asBoolean() ? IsolationLevel.READ_COMMITTED
                : IsolationLevel.READ_UNCOMMITTED;
        ListOffsetsResult r = admin.listOffsets(specs, new ListOffsetsOptions(isolation));
        ObjectNode out = Out.object();
        for (TopicPartition tp : specs.keySet()) {
            try {
                ListOffsetsResult.ListOffsetsResultInfo info = get(r.partitionResult(tp));
                out.set(tp(tp), Out.object().put("offset", info.offset()).put("timestamp", info.timestamp())
                        .put("leaderEpoch", info.leaderEpoch().orElse(-1)));
            } catch (Exception e) {
                out.set(tp(tp), error(e));
            }
        }
        return sorted(out);
    }

    private static JsonNode describeLogDirs(Admin admin, JsonNode a) {
        List<Integer> brokers = new ArrayList<>();
        a.path("brokers").forEach(b -> brokers.add(b.asInt()));
        return each(admin.describeLogDirs(brokers).descriptions(), String::valueOf, dirs -> {
            ObjectNode byDir = Out.object();
            for (Map.Entry<String, LogDirDescription> d : dirs.entrySet()) {
                LogDirDescription desc = d.getValue();
                ObjectNode replicas = Out.object();
                for (Map.Entry<TopicPartition, ReplicaInfo> r : desc.replicaInfos().entrySet()) {
                    replicas.set(tp(r.getKey()), Out.object().put("size", r.getValue().size())
                            .put("offsetLag", r.getValue().offsetLag()).put("isFuture", r.getValue().isFuture()));
                }
                ObjectNode o = Out.object().put("error", desc.error() == null ? null : desc.error().getClass().getSimpleName());
                o.put("totalBytes", desc.totalBytes().orElse(-1)).put("usableBytes", desc.usableBytes().orElse(-1));
                o.set("replicas", sorted(replicas));
                byDir.set(d.getKey(), o);
            }
            return byDir;
        });
    }

    private static List<TopicPartitionReplica> replicas(JsonNode a) {
        List<TopicPartitionReplica> out = new ArrayList<>();
        for (JsonNode p : a.path("partitions")) {
            out.add(new TopicPartitionReplica(a.path("topic").asText(), p.asInt(), a.path("broker").asInt()));
        }
        return out;
    }

    private static JsonNode describeReplicaLogDirs(Admin admin, JsonNode a) {
        return each(admin.describeReplicaLogDirs(replicas(a)).values(), r -> r.topic() + "-" + r.partition(),
                info -> Out.object().put("currentReplicaLogDir", info.getCurrentReplicaLogDir())
                        .put("futureReplicaLogDir", info.getFutureReplicaLogDir()));
    }

    private static JsonNode alterReplicaLogDirs(Admin admin, JsonNode a) {
        Map<TopicPartitionReplica, String> moves = new HashMap<>();
        replicas(a).forEach(r -> moves.put(r, a.path("dir").asText()));
        return each(admin.alterReplicaLogDirs(moves).values(), r -> r.topic() + "-" + r.partition(), AdminCalls::ok);
    }

    // -- features, leaders, reassignments -----------------------------------------------------------------

    private static JsonNode describeFeatures(Admin admin) throws Exception {
        FeatureMetadata m = get(admin.describeFeatures().featureMetadata());
        ObjectNode finalized = Out.object();
        m.finalizedFeatures().forEach((k, v) -> finalized.set(k, Out.array().add(v.minVersionLevel()).add(v.maxVersionLevel())));
        ObjectNode supported = Out.object();
        m.supportedFeatures().forEach((k, v) -> supported.set(k, Out.array().add(v.minVersion()).add(v.maxVersion())));
        ObjectNode out = Out.object().put("epoch", m.finalizedFeaturesEpoch().orElse(-1L));
        out.set("finalized", sorted(finalized));
        out.set("supported", sorted(supported));
        return out;
    }

    private static JsonNode updateFeatures(Admin admin, JsonNode a) {
        Map<String, FeatureUpdate> updates = new HashMap<>();
        a.path("updates").fields().forEachRemaining(e -> updates.put(e.getKey(), new FeatureUpdate(
                (short) e.getValue().path("level").asInt(),
                FeatureUpdate.UpgradeType.valueOf(e.getValue().path("type").asText("UPGRADE")))));
        return each(admin.updateFeatures(updates, new UpdateFeaturesOptions()
                .validateOnly(a.path("validateOnly").asBoolean())).values(), n -> n, AdminCalls::ok);
    }

    private static JsonNode electLeaders(Admin admin, JsonNode a) throws Exception {
        ElectionType type = ElectionType.valueOf(a.path("type").asText("PREFERRED"));
        Set<TopicPartition> partitions = a.has("partitions") ? partitionsOf(a) : null;
        Map<TopicPartition, Optional<Throwable>> r = get(admin.electLeaders(type, partitions).partitions());
        ObjectNode out = Out.object();
        r.forEach((tp, e) -> out.set(tp(tp), e.isPresent() ? error(e.get()) : Out.object()));
        return sorted(out);
    }

    private static JsonNode alterPartitionReassignments(Admin admin, JsonNode a) {
        Map<TopicPartition, Optional<NewPartitionReassignment>> moves = new HashMap<>();
        a.path("targets").fields().forEachRemaining(e -> {
            Optional<NewPartitionReassignment> target = Optional.empty();
            if (!e.getValue().isNull()) {
                List<Integer> ids = new ArrayList<>();
                e.getValue().forEach(n -> ids.add(n.asInt()));
                target = Optional.of(new NewPartitionReassignment(ids));
            }
            moves.put(tp(a.path("topic"), e.getKey()), target);
        });
        return each(admin.alterPartitionReassignments(moves).values(), AdminCalls::tp, AdminCalls::ok);
    }

    private static JsonNode listPartitionReassignments(Admin admin, JsonNode a) throws Exception {
        Map<TopicPartition, PartitionReassignment> r = a.has("partitions")
                ? get(admin.listPartitionReassignments(partitionsOf(a)).reassignments())
                : get(admin.listPartitionReassignments().reassignments());
        ObjectNode out = Out.object();
        r.forEach((tp, re) -> out.set(tp(tp), Out.object().set("replicas", ints(re.replicas()))));
        return sorted(out);
    }
}
