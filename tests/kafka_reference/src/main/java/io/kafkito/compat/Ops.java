package io.kafkito.compat;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Duration;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.producer.KafkaProducer;

/** The commands the driver runs, by name; the Admin clients it keeps (one per bootstrap, reused). */
final class Ops {
    private final Map<String, Admin> admins = new ConcurrentHashMap<>();
    private final Consumers consumers = new Consumers();
    private final Map<String, KafkaProducer<byte[], byte[]>> openTransactions = new ConcurrentHashMap<>();

    JsonNode run(JsonNode cmd) throws Exception {
        String op = cmd.path("op").asText();
        switch (op) {
            case "version":
                return Out.object().put("version", org.apache.kafka.common.utils.internals.AppInfoParser.getVersion());
            case "metadata":
                return Clients.metadata(admin(cmd), cmd.path("topic").asText());
            case "create-topic":
                return Clients.createTopic(admin(cmd), cmd.path("topic").asText(), cmd.path("partitions").asInt());
            case "delete-topic":
                return Clients.deleteTopic(admin(cmd), cmd.path("topic").asText());
            case "list-topics":
                return Clients.listTopics(admin(cmd));
            case "produce":
                return Clients.produce(Conf.of(cmd), cmd);
            case "transaction":
                return Clients.transaction(Conf.of(cmd), cmd);
            case "commit-fetch":
                return Clients.commitAndFetch(Conf.of(cmd), admin(cmd), cmd);
            case "describe-group":
                return Clients.describeGroup(admin(cmd), cmd.path("group").asText());
            case "group-type":
                return Clients.groupType(admin(cmd), cmd.path("group").asText());
            case "set-group-config":
                return Clients.setGroupConfig(admin(cmd), cmd);
            case "round-trip":
                return Clients.roundTrip(Conf.of(cmd));
            case "login-error":
                return Clients.loginError(Conf.of(cmd));
            case "consumer-start":
                return consumers.start(Conf.of(cmd), cmd);
            case "consumer-stop":
                return consumers.stop(cmd.path("key").asText());
            case "admin":
                return AdminCalls.call(admin(cmd), cmd.path("call").asText(), cmd.path("args"));
            case "txn-open":
                return openTransaction(cmd);
            case "txn-close":
                KafkaProducer<byte[], byte[]> producer = openTransactions.remove(cmd.path("key").asText());
                if (producer != null) {
                    producer.close(Duration.ZERO);
                }
                return Out.object();
            case "admin-close":
                Admin gone = admins.remove(cmd.path("bootstrap").asText());
                if (gone != null) {
                    gone.close();
                }
                return Out.object();
            default:
                throw new IllegalArgumentException("unknown op " + op);
        }
    }

    /** A transactional producer that begins a transaction, writes "records" and leaves it open, until txn-close. */
    private JsonNode openTransaction(JsonNode cmd) throws Exception {
        Properties props = Conf.with(Conf.of(cmd), "transactional.id", cmd.path("transactionalId").asText());
        KafkaProducer<byte[], byte[]> producer = Clients.producer(props);
        openTransactions.put(cmd.path("key").asText(), producer);
        producer.initTransactions();
        producer.beginTransaction();
        for (JsonNode r : cmd.path("records")) {
            producer.send(Clients.record(cmd.path("topic").asText(), r));
        }
        producer.flush();
        return Out.object();
    }

    /** The Admin client for the command's bootstrap (commands with a login get one of their own). */
    private Admin admin(JsonNode cmd) {
        Properties props = Conf.of(cmd);
        return admins.computeIfAbsent(cmd.path("bootstrap").asText() + cmd.path("login").toString()
                + cmd.path("config").toString(), k -> Admin.create(props));
    }

    void closeAll() {
        consumers.stopAll();
        openTransactions.values().forEach(p -> p.close(Duration.ZERO));
        admins.values().forEach(Admin::close);
    }
}
