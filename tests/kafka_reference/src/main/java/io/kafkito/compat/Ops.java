package io.kafkito.compat;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.clients.admin.Admin;

/** The commands the driver runs, by name; the Admin clients it keeps (one per bootstrap, reused). */
final class Ops {
    private final Map<String, Admin> admins = new ConcurrentHashMap<>();
    private final Consumers consumers = new Consumers();

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

    /** The Admin client for the command's bootstrap (commands with a login get one of their own). */
    private Admin admin(JsonNode cmd) {
        Properties props = Conf.of(cmd);
        return admins.computeIfAbsent(cmd.path("bootstrap").asText() + cmd.path("login").toString()
                + cmd.path("config").toString(), k -> Admin.create(props));
    }

    void closeAll() {
        consumers.stopAll();
        admins.values().forEach(Admin::close);
    }
}
