package io.kafkito.compat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.DescribeClusterResult;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.clients.admin.ListGroupsOptions;
import org.apache.kafka.clients.admin.MemberDescription;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.GroupType;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/** The compatibility scenarios' one-shot commands, each in the Java client's ordinary idiom. */
final class Clients {
    static final long TIMEOUT_S = 30;

    private Clients() {}

    static JsonNode metadata(Admin admin, String topic) throws Exception {
        DescribeClusterResult cluster = admin.describeCluster();
        ArrayNode brokers = Out.array();
        for (Node n : cluster.nodes().get(TIMEOUT_S, TimeUnit.SECONDS)) {
            brokers.add(Out.array().add(n.id()).add(n.host()).add(n.port()));
        }
        TopicDescription t = admin.describeTopics(List.of(topic)).allTopicNames().get(TIMEOUT_S, TimeUnit.SECONDS)
                .get(topic);
        ArrayNode partitions = Out.array();
        for (TopicPartitionInfo p : t.partitions()) {
            partitions.add(Out.array().add(p.partition()).add(p.leader() == null ? -1 : p.leader().id()));
        }
        ObjectNode out = Out.object().put("clusterId", cluster.clusterId().get(TIMEOUT_S, TimeUnit.SECONDS));
        out.set("brokers", brokers);
        out.set("partitions", partitions);
        return out;
    }

    static JsonNode createTopic(Admin admin, String topic, int partitions) throws Exception {
        admin.createTopics(List.of(new NewTopic(topic, partitions, (short) 1))).all().get(TIMEOUT_S, TimeUnit.SECONDS);
        return Out.object();
    }

    static JsonNode deleteTopic(Admin admin, String topic) throws Exception {
        admin.deleteTopics(List.of(topic)).all().get(TIMEOUT_S, TimeUnit.SECONDS);
        return Out.object();
    }

    static JsonNode listTopics(Admin admin) throws Exception {
        ArrayNode names = Out.array();
        admin.listTopics().names().get(TIMEOUT_S, TimeUnit.SECONDS).forEach(names::add);
        return Out.object().set("topics", names);
    }

    static ProducerRecord<byte[], byte[]> record(String topic, JsonNode r) {
        List<Header> headers = new ArrayList<>();
        for (JsonNode h : r.path("headers")) {
            byte[] value = Out.unb64(h.get(1));
            headers.add(new RecordHeader(h.get(0).asText(), value == null ? new byte[0] : value));
        }
        Long timestamp = r.path("timestamp").isNull() || r.path("timestamp").isMissingNode()
                ? null : r.path("timestamp").asLong();
        return new ProducerRecord<>(topic, r.path("partition").asInt(), timestamp, Out.unb64(r.get("key")),
                Out.unb64(r.get("value")), headers);
    }

    static KafkaProducer<byte[], byte[]> producer(Properties props) {
        return new KafkaProducer<>(props, new ByteArraySerializer(), new ByteArraySerializer());
    }

    /** Sends every record (one batch per partition: the linger holds them until flush) and waits for all. */
    static JsonNode produce(Properties base, JsonNode cmd) throws Exception {
        Properties props = Conf.with(base, "compression.type", cmd.path("codec").asText(), "acks", "all",
                "linger.ms", "1000", "batch.size", String.valueOf(4 << 20));
        String topic = cmd.path("topic").asText();
        try (KafkaProducer<byte[], byte[]> producer = producer(props)) {
            List<Future<RecordMetadata>> sent = new ArrayList<>();
            for (JsonNode r : cmd.path("records")) {
                sent.add(producer.send(record(topic, r)));
            }
            producer.flush();
            for (Future<RecordMetadata> f : sent) {
                f.get(TIMEOUT_S, TimeUnit.SECONDS);
            }
        }
        return Out.object().put("produced", cmd.path("records").size());
    }

    /** One transactional producer, a transaction per step: records, offsets for a group, commit or abort. */
    static JsonNode transaction(Properties base, JsonNode cmd) throws Exception {
        Properties props = Conf.with(base, "transactional.id", cmd.path("transactionalId").asText(),
                "linger.ms", "5");
        String topic = cmd.path("topic").asText();
        ArrayNode ended = Out.array();
        try (KafkaProducer<byte[], byte[]> producer = producer(props)) {
            producer.initTransactions();
            for (JsonNode step : cmd.path("steps")) {
                producer.beginTransaction();
                for (JsonNode r : step.path("records")) {
                    producer.send(record(topic, r));
                }
                JsonNode offsets = step.path("offsets");
                if (offsets.isObject()) {
                    Map<TopicPartition, OffsetAndMetadata> toSend = new HashMap<>();
                    offsets.path("partitions").fields().forEachRemaining(e -> toSend.put(
                            new TopicPartition(topic, Integer.parseInt(e.getKey())),
                            new OffsetAndMetadata(e.getValue().asLong())));
                    producer.sendOffsetsToTransaction(toSend,
                            new ConsumerGroupMetadata(offsets.path("group").asText()));
                }
                if (step.path("commit").asBoolean()) {
                    producer.commitTransaction();
                } else {
                    // abortTransaction() drops batches not yet sent: flush so the aborted records are written.
                    producer.flush();
                    producer.abortTransaction();
                }
                ended.add(step.path("commit").asBoolean());
            }
        }
        return Out.object().set("ended", ended);
    }

    static KafkaConsumer<byte[], byte[]> consumer(Properties props) {
        return new KafkaConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer());
    }

    /** commitSync with metadata from a consumer that never joins the group, then committed() and the Admin view. */
    static JsonNode commitAndFetch(Properties base, Admin admin, JsonNode cmd) throws Exception {
        String group = cmd.path("group").asText();
        String topic = cmd.path("topic").asText();
        Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
        cmd.path("offsets").fields().forEachRemaining(e -> {
            int p = Integer.parseInt(e.getKey());
            offsets.put(new TopicPartition(topic, p), new OffsetAndMetadata(e.getValue().asLong(), "meta-" + p));
        });
        Map<TopicPartition, OffsetAndMetadata> committed;
        try (KafkaConsumer<byte[], byte[]> consumer = consumer(Conf.with(base, "group.id", group,
                "enable.auto.commit", "false"))) {
            consumer.commitSync(offsets);
            committed = consumer.committed(offsets.keySet(), Duration.ofSeconds(TIMEOUT_S));
        }
        Map<TopicPartition, OffsetAndMetadata> listed = admin.listConsumerGroupOffsets(group)
                .partitionsToOffsetAndMetadata().get(TIMEOUT_S, TimeUnit.SECONDS);
        ObjectNode out = Out.object();
        for (Map.Entry<TopicPartition, OffsetAndMetadata> e : committed.entrySet()) {
            OffsetAndMetadata om = e.getValue();
            int p = e.getKey().partition();
            Errors.check(om != null && om.metadata().equals("meta-" + p), "committed " + e);
            OffsetAndMetadata byAdmin = listed.get(e.getKey());
            Errors.check(byAdmin != null && byAdmin.offset() == om.offset(), "admin saw " + listed);
            out.put(String.valueOf(p), om.offset());
        }
        return out;
    }

    static JsonNode describeGroup(Admin admin, String group) throws Exception {
        Collection<GroupListing> listing = admin.listGroups().all().get(TIMEOUT_S, TimeUnit.SECONDS);
        ConsumerGroupDescription d = admin.describeConsumerGroups(List.of(group)).all()
                .get(TIMEOUT_S, TimeUnit.SECONDS).get(group);
        ArrayNode members = Out.array();
        for (MemberDescription m : d.members()) {
            ObjectNode assignment = Out.object();
            for (TopicPartition tp : m.assignment().topicPartitions()) {
                ArrayNode ps = assignment.has(tp.topic()) ? (ArrayNode) assignment.get(tp.topic())
                        : assignment.putArray(tp.topic());
                ps.add(tp.partition());
            }
            members.add(Out.array().add(m.clientId()).add(assignment));
        }
        ObjectNode out = Out.object();
        out.put("listed", listing.stream().anyMatch(g -> g.groupId().equals(group)));
        out.put("protocolType", d.isSimpleConsumerGroup() ? "" : "consumer");
        out.put("state", d.groupState().toString());
        out.put("protocol", d.partitionAssignor());
        out.set("members", members);
        return out;
    }

    /** The group's type as describeConsumerGroups says it, checked against listGroups filtered by type. */
    static JsonNode groupType(Admin admin, String group) throws Exception {
        ConsumerGroupDescription d = admin.describeConsumerGroups(List.of(group)).all()
                .get(TIMEOUT_S, TimeUnit.SECONDS).get(group);
        List<String> listedAs = new ArrayList<>();
        for (GroupType type : List.of(GroupType.CONSUMER, GroupType.CLASSIC)) {
            Collection<GroupListing> listed = admin.listGroups(new ListGroupsOptions().withTypes(Set.of(type)))
                    .all().get(TIMEOUT_S, TimeUnit.SECONDS);
            if (listed.stream().anyMatch(g -> g.groupId().equals(group))) {
                listedAs.add(type.toString());
            }
        }
        String described = d.type().toString();
        Errors.check(listedAs.equals(List.of(described)), "listed as " + listedAs + ", described as " + described);
        return Out.object().put("type", described);
    }

    static JsonNode setGroupConfig(Admin admin, JsonNode cmd) throws Exception {
        ConfigResource group = new ConfigResource(ConfigResource.Type.GROUP, cmd.path("group").asText());
        AlterConfigOp set = new AlterConfigOp(new ConfigEntry(cmd.path("name").asText(), cmd.path("value").asText()),
                AlterConfigOp.OpType.SET);
        admin.incrementalAlterConfigs(Map.of(group, List.of(set))).all().get(TIMEOUT_S, TimeUnit.SECONDS);
        return Out.object();
    }

    /** Over a secured listener: produce 10 records, consume them in a group, commit, read the commit back. */
    static JsonNode roundTrip(Properties base) throws Exception {
        String tag = UUID.randomUUID().toString().substring(0, 8);
        String topic = "secured-" + tag;
        List<String> values = new ArrayList<>();
        try (KafkaProducer<byte[], byte[]> producer = producer(base)) {
            for (int i = 0; i < 10; i++) {
                values.add("record-" + i);
                producer.send(new ProducerRecord<>(topic, ("record-" + i).getBytes())).get(TIMEOUT_S, TimeUnit.SECONDS);
            }
        }
        Properties props = Conf.with(base, "group.id", "group-" + tag, "auto.offset.reset", "earliest",
                "enable.auto.commit", "false");
        List<String> got = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> consumer = consumer(props)) {
            consumer.subscribe(List.of(topic));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (got.size() < values.size() && System.nanoTime() < deadline) {
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
                    got.add(new String(r.value()));
                }
            }
            Errors.check(got.equals(values), "consumed " + got);
            consumer.commitSync();
            TopicPartition tp = new TopicPartition(topic, 0);
            OffsetAndMetadata committed = consumer.committed(Set.of(tp), Duration.ofSeconds(TIMEOUT_S)).get(tp);
            Errors.check(committed != null && committed.offset() == values.size(), "committed " + committed);
        }
        return Out.object().put("committed", values.size());
    }

    /** What the Java client throws when its login is refused (an Admin call, the first request it makes). */
    static JsonNode loginError(Properties base) throws Exception {
        try (Admin admin = Admin.create(base)) {
            admin.describeCluster().clusterId().get(TIMEOUT_S, TimeUnit.SECONDS);
        } catch (Exception e) {
            Throwable cause = Errors.unwrap(e);
            return Out.object().put("error", cause.getClass().getSimpleName() + ": " + cause.getMessage());
        }
        throw new Errors.CheckFailed("the Java client logged in with a wrong password");
    }

    static Set<Integer> partitions(Collection<TopicPartition> tps) {
        Set<Integer> out = new HashSet<>();
        tps.forEach(tp -> out.add(tp.partition()));
        return out;
    }
}
