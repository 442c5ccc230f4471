package org.kafkito.streams;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.StreamsGroupDescription;
import org.apache.kafka.clients.admin.StreamsGroupMemberDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.ThreadMetadata;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;

import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * N instances of one Kafka Streams application in this JVM, started together, for bench/streams_groups.py:
 * {@code GroupFormationBench <bootstrap> <application.id> <input> <output> <instances> <partitions>
 * <state.dir> <timeout.s> [<fetch.max.wait.ms>]}. Each instance is its own {@code KafkaStreams} (one stream thread, its own
 * state directory, {@code group.protocol=streams}) running the word count's shape (WordCount.java: a
 * repartition topic and a state store, so two subtopologies of {@code partitions} tasks each); everything
 * else is Kafka Streams' defaults (the main consumers' {@code fetch.max.wait.ms} when given). It prints JSON
 * lines on stdout:
 * <ul>
 * <li>{@code formed}: milliseconds from the first {@code start()} until the broker describes the group
 * ({@code Admin.describeStreamsGroups}, polled every 50 ms) as Stable with every instance a member and
 * every task assigned once ({@code stable_ms}), and until every instance is RUNNING with its active tasks
 * adding up to every task once ({@code running_ms}); -1 for what did not happen within the timeout; and
 * {@code trace}, each change of the described group seen by the polls (ms, state, members, group epoch,
 * target assignment epoch, members at that epoch);</li>
 * <li>{@code mark}, for each {@code mark} line read on stdin: the sums over every instance's clients of
 * the heartbeats, fetches and requests sent so far (their {@code heartbeat-total}, {@code fetch-total},
 * {@code request-total} metrics), and the group's state and member count as described then.</li>
 * </ul>
 * A {@code stop} line (or the end of stdin) ends the JVM at once: the broker it ran against is thrown away.
 */
public final class GroupFormationBench {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Set<String> CLIENT_GROUPS = Set.of("consumer-metrics", "producer-metrics",
        "admin-client-metrics");

    private GroupFormationBench() {
    }

    public static void main(String[] args) throws Exception {
        String bootstrap = args[0], applicationId = args[1], input = args[2], output = args[3];
        int instances = Integer.parseInt(args[4]), partitions = Integer.parseInt(args[5]);
        Path stateDir = Path.of(args[6]);
        long timeoutMs = TimeUnit.SECONDS.toMillis(Long.parseLong(args[7]));
        String fetchWaitMs = args.length > 8 ? args[8] : null;

        Topology topology = wordCount(input, output);
        int tasks = topology.describe().subtopologies().size() * partitions;
        List<KafkaStreams> apps = new ArrayList<>();
        for (int i = 0; i < instances; i++) {
            apps.add(new KafkaStreams(topology, props(bootstrap, applicationId, stateDir.resolve("i" + i), fetchWaitMs)));
        }
        Properties adminProps = new Properties();
        adminProps.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        try (Admin admin = Admin.create(adminProps)) {
            long t0 = System.nanoTime();
            for (KafkaStreams app : apps) {
                app.start();
            }
            long stable = -1, running = -1;
            int describes = 0;
            List<List<Object>> trace = new ArrayList<>();
            while ((stable < 0 || running < 0) && elapsedMs(t0) < timeoutMs) {
                if (stable < 0) {
                    describes++;
                    StreamsGroupDescription group = describe(admin, applicationId);
                    List<Object> seen = summary(group);
                    if (trace.isEmpty() || !trace.get(trace.size() - 1).subList(1, seen.size() + 1).equals(seen)) {
                        List<Object> change = new ArrayList<>(List.of(elapsedMs(t0)));
                        change.addAll(seen);
                        trace.add(change);
                    }
                    if (stableWithEveryTask(group, instances, tasks)) {
                        stable = elapsedMs(t0);
                    }
                }
                if (running < 0 && runningWithEveryTask(apps, tasks)) {
                    running = elapsedMs(t0);
                }
                Thread.sleep(50);
            }
            say(Map.of("event", "formed", "stable_ms", stable, "running_ms", running, "tasks", tasks,
                "describes", describes, "trace", trace));
            BufferedReader stdin = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            for (String line = stdin.readLine(); line != null && line.equals("mark"); line = stdin.readLine()) {
                say(mark(apps, describe(admin, applicationId)));
            }
        }
        Runtime.getRuntime().halt(0);
    }

    /** The word count's topology (as WordCount.java builds it). */
    static Topology wordCount(String input, String output) {
        StreamsBuilder builder = new StreamsBuilder();
        builder.stream(input, Consumed.with(Serdes.String(), Serdes.String()))
            .flatMapValues(line -> Arrays.asList(line.toLowerCase(Locale.ROOT).split("\\W+")))
            .filter((key, word) -> !word.isEmpty())
            .groupBy((key, word) -> word, Grouped.with("words", Serdes.String(), Serdes.String()))
            .count(Materialized.as("counts"))
            .toStream()
            .to(output, Produced.with(Serdes.String(), Serdes.Long()));
        return builder.build();
    }

    static Properties props(String bootstrap, String applicationId, Path stateDir, String fetchWaitMs) {
        Properties props = new Properties();
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, applicationId);
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(StreamsConfig.GROUP_PROTOCOL_CONFIG, "streams");
        props.put(StreamsConfig.STATE_DIR_CONFIG, stateDir.toString());
        props.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, 1);
        props.put(StreamsConfig.REPLICATION_FACTOR_CONFIG, 1);
        if (fetchWaitMs != null) {
            props.put(StreamsConfig.mainConsumerPrefix(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG), fetchWaitMs);
        }
        return props;
    }

    static StreamsGroupDescription describe(Admin admin, String group) throws InterruptedException {
        try {
            return admin.describeStreamsGroups(List.of(group)).all().get(10, TimeUnit.SECONDS).get(group);
        } catch (InterruptedException e) {
            throw e;
        } catch (Exception e) {  // not there yet, or the coordinator is loading: the next poll asks again
            return null;
        }
    }

    /** State, members, group epoch, target assignment epoch, members at the target epoch. */
    static List<Object> summary(StreamsGroupDescription group) {
        if (group == null) {
            return List.of("none", 0, -1, -1, 0);
        }
        long reconciled = group.members().stream()
            .filter(m -> m.memberEpoch() == group.targetAssignmentEpoch()).count();
        return List.of(group.groupState().toString(), group.members().size(), group.groupEpoch(),
            group.targetAssignmentEpoch(), reconciled);
    }

    static boolean stableWithEveryTask(StreamsGroupDescription group, int instances, int tasks) {
        if (group == null || !group.groupState().toString().equalsIgnoreCase("Stable")
            || group.members().size() != instances) {
            return false;
        }
        Set<String> assigned = new HashSet<>();
        int count = 0;
        for (StreamsGroupMemberDescription m : group.members()) {
            for (var t : m.assignment().activeTasks()) {
                for (int p : t.partitions()) {
                    assigned.add(t.subtopologyId() + "_" + p);
                    count++;
                }
            }
        }
        return count == tasks && assigned.size() == tasks;
    }

    static boolean runningWithEveryTask(List<KafkaStreams> apps, int tasks) {
        Set<String> active = new HashSet<>();
        int count = 0;
        for (KafkaStreams app : apps) {
            if (app.state() != KafkaStreams.State.RUNNING) {
                return false;
            }
            for (ThreadMetadata thread : app.metadataForLocalThreads()) {
                for (var task : thread.activeTasks()) {
                    active.add(task.taskId().toString());
                    count++;
                }
            }
        }
        return count == tasks && active.size() == tasks;
    }

    static Map<String, Object> mark(List<KafkaStreams> apps, StreamsGroupDescription group) {
        double heartbeats = 0, fetches = 0, requests = 0;
        for (KafkaStreams app : apps) {
            for (Map.Entry<MetricName, ? extends Metric> e : app.metrics().entrySet()) {
                MetricName name = e.getKey();
                Object value = e.getValue().metricValue();
                if (!(value instanceof Double v)) {
                    continue;
                }
                if (name.name().equals("heartbeat-total")) {
                    heartbeats += v;
                } else if (name.name().equals("fetch-total") && name.group().equals("consumer-fetch-manager-metrics")) {
                    fetches += v;
                } else if (name.name().equals("request-total") && CLIENT_GROUPS.contains(name.group())) {
                    requests += v;
                }
            }
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("event", "mark");
        out.put("heartbeats", (long) heartbeats);
        out.put("fetches", (long) fetches);
        out.put("requests", (long) requests);
        out.put("state", group == null ? "unknown" : group.groupState().toString());
        out.put("members", group == null ? -1 : group.members().size());
        return out;
    }

    static long elapsedMs(long t0) {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
    }

    static void say(Map<String, Object> line) throws Exception {
        System.out.println(JSON.writeValueAsString(line));
        System.out.flush();
    }
}
