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
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * Running consumers, each a thread of the JVM that owns its client: a reader of assigned partitions, a
 * group member (classic or KIP-848 protocol) or a share-group member. Each reports what it sees as
 * events {"consumer": name, "type": ...}; "consumer-stop" closes it gracefully and returns once closed.
 */
final class Consumers {
    private static final Duration POLL = Duration.ofMillis(100);
    private final Map<String, Running> running = new ConcurrentHashMap<>();

    private static final class Running {
        final AtomicBoolean stopping = new AtomicBoolean();
        final CountDownLatch closed = new CountDownLatch(1);
    }

    /** Starts the consumer "key" (its events are named so), whose client id is "name". */
    JsonNode start(Properties base, JsonNode cmd) {
        String name = cmd.path("key").asText();
        Running r = new Running();
        Errors.check(running.putIfAbsent(name, r) == null, "a consumer " + name + " is running");
        Runnable loop;
        switch (cmd.path("kind").asText()) {
            case "reader":
                loop = () -> reader(base, cmd, name, r);
                break;
            case "member":
                loop = () -> member(base, cmd, name, r);
                break;
            case "share":
                loop = () -> share(base, cmd, name, r);
                break;
            default:
                throw new IllegalArgumentException("unknown consumer kind " + cmd.path("kind").asText());
        }
        Thread t = new Thread(() -> {
            try {
                loop.run();
            } catch (Throwable e) {
                Throwable cause = Errors.unwrap(e);
                event(name, "error").put("error", cause.getClass().getSimpleName() + ": " + cause.getMessage())
                        .put("trace", Errors.trace(e));
            } finally {
                r.closed.countDown();
                running.remove(name);
                Out.emit(event(name, "closed"));
            }
        }, name);
        t.setDaemon(true);
        t.start();
        return Out.object();
    }

    JsonNode stop(String name) throws InterruptedException {
        Running r = running.get(name);
        if (r == null) {
            return Out.object().put("closed", true);
        }
        r.stopping.set(true);
        return Out.object().put("closed", r.closed.await(90, TimeUnit.SECONDS));
    }

    void stopAll() {
        running.values().forEach(r -> r.stopping.set(true));
    }

    private static ObjectNode event(String name, String type) {
        return Out.object().put("consumer", name).put("type", type);
    }

    private static void emit(ObjectNode event) {
        Out.emit(event);
    }

    private static ObjectNode record(String name, ConsumerRecord<byte[], byte[]> m) {
        ArrayNode headers = Out.array();
        for (Header h : m.headers()) {
            headers.add(Out.array().add(h.key()).add(Out.b64(h.value())));
        }
        ObjectNode e = event(name, "record").put("partition", m.partition()).put("offset", m.offset())
                .put("key", Out.b64(m.key())).put("value", Out.b64(m.value())).put("timestamp", m.timestamp());
        e.set("headers", headers);
        return e;
    }

    private static ObjectNode partitions(String name, String type, Collection<Integer> ps) {
        ArrayNode list = Out.array();
        new TreeSet<>(ps).forEach(list::add);
        ObjectNode e = event(name, type);
        e.set("partitions", list);
        return e;
    }

    private static KafkaConsumer<byte[], byte[]> consumer(Properties props) {
        return new KafkaConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer());
    }

    /** assign() every partition, seek to the beginning or the end, and report ready once positions are known. */
    private static void reader(Properties base, JsonNode cmd, String name, Running r) {
        Properties props = Conf.with(base, "enable.auto.commit", "false", "client.id", cmd.path("name").asText());
        String topic = cmd.path("topic").asText();
        try (KafkaConsumer<byte[], byte[]> consumer = consumer(props)) {
            List<TopicPartition> tps = new ArrayList<>();
            for (int p = 0; p < cmd.path("partitions").asInt(); p++) {
                tps.add(new TopicPartition(topic, p));
            }
            consumer.assign(tps);
            if (cmd.path("start").asText().equals("latest")) {
                consumer.seekToEnd(tps);
            } else {
                consumer.seekToBeginning(tps);
            }
            tps.forEach(tp -> consumer.position(tp, Duration.ofSeconds(30)));
            emit(partitions(name, "assigned", Clients.partitions(tps)));
            emit(event(name, "ready"));
            while (!r.stopping.get()) {
                for (ConsumerRecord<byte[], byte[]> m : consumer.poll(POLL)) {
                    emit(record(name, m));
                }
            }
        }
    }

    /**
     * A group member that commits synchronously after each poll that returned records. The rebalance
     * listener runs inside poll(), on this thread, so a partition is never revoked between processing a
     * record and committing it. The member's whole assignment is reported after each change.
     */
    private static void member(Properties base, JsonNode cmd, String name, Running r) {
        boolean classic = !cmd.path("protocol").asText().equals("consumer");
        Properties props = Conf.with(base, "group.id", cmd.path("group").asText(), "client.id", cmd.path("name").asText(),
                "enable.auto.commit", "false", "auto.offset.reset", "earliest",
                "group.protocol", classic ? "classic" : "consumer");
        if (classic) {
            String assignor = cmd.path("assignor").asText("range").equals("roundrobin")
                    ? "org.apache.kafka.clients.consumer.RoundRobinAssignor"
                    : "org.apache.kafka.clients.consumer.RangeAssignor";
            props.put("partition.assignment.strategy", assignor);
            props.put("session.timeout.ms", cmd.path("sessionTimeoutMs").asText("15000"));
            props.put("heartbeat.interval.ms", cmd.path("heartbeatIntervalMs").asText("500"));
        }
        Set<Integer> owned = new HashSet<>();
        ConsumerRebalanceListener listener = new ConsumerRebalanceListener() {
            @Override
            public void onPartitionsRevoked(Collection<TopicPartition> tps) {
                owned.removeAll(Clients.partitions(tps));
                emit(partitions(name, "revoked", Clients.partitions(tps)));
                if (!classic && !tps.isEmpty()) {
                    emit(partitions(name, "assigned", owned));
                }
            }

            @Override
            public void onPartitionsAssigned(Collection<TopicPartition> tps) {
                owned.addAll(Clients.partitions(tps));
                emit(partitions(name, "assigned", owned));
            }

            @Override
            public void onPartitionsLost(Collection<TopicPartition> tps) {
                onPartitionsRevoked(tps);
            }
        };
        try (KafkaConsumer<byte[], byte[]> consumer = consumer(props)) {
            consumer.subscribe(List.of(cmd.path("topic").asText()), listener);
            while (!r.stopping.get()) {
                ConsumerRecords<byte[], byte[]> got = consumer.poll(POLL);
                for (ConsumerRecord<byte[], byte[]> m : got) {
                    emit(record(name, m));
                }
                if (!got.isEmpty()) {
                    consumer.commitSync();
                }
            }
        } // close() leaves the group; auto commit is off, so it commits nothing more
    }

    /**
     * A KafkaShareConsumer. Implicit mode: each poll accepts the previous one's records, close the last.
     * Explicit mode: each record is acknowledged as "acks" says (accept when absent) and committed with
     * commitSync after each poll; once every record named there is acknowledged, it polls no more.
     */
    private static void share(Properties base, JsonNode cmd, String name, Running r) {
        boolean explicit = cmd.path("acks").isArray();
        Map<String, AcknowledgeType> acks = new HashMap<>();
        for (JsonNode a : cmd.path("acks")) {
            acks.put(a.get(0).asInt() + ":" + a.get(1).asLong(), AcknowledgeType.valueOf(a.get(2).asText().toUpperCase()));
        }
        Set<String> awaited = new HashSet<>(acks.keySet());
        Properties props = Conf.with(base, "group.id", cmd.path("group").asText(), "client.id", cmd.path("name").asText(),
                "share.acknowledgement.mode", explicit ? "explicit" : "implicit");
        try (KafkaShareConsumer<byte[], byte[]> consumer = new KafkaShareConsumer<>(props,
                new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            consumer.subscribe(List.of(cmd.path("topic").asText()));
            while (!r.stopping.get()) {
                if (explicit && !acks.isEmpty() && awaited.isEmpty()) {
                    sleep(100); // done acknowledging: a member that holds nothing
                    continue;
                }
                ConsumerRecords<byte[], byte[]> got = consumer.poll(POLL);
                for (ConsumerRecord<byte[], byte[]> m : got) {
                    Optional<Short> count = m.deliveryCount();
                    emit(record(name, m).put("deliveryCount", count.map(Short::intValue).orElse(-1)));
                    if (explicit) {
                        String where = m.partition() + ":" + m.offset();
                        consumer.acknowledge(m, awaited.remove(where) ? acks.get(where) : AcknowledgeType.ACCEPT);
                    }
                }
                if (explicit && !got.isEmpty()) {
                    for (Map.Entry<TopicIdPartition, Optional<KafkaException>> e : consumer.commitSync().entrySet()) {
                        e.getValue().ifPresent(error -> emit(event(name, "error")
                                .put("error", "acknowledging " + e.getKey() + ": " + error)));
                    }
                }
            }
        }
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
