package io.kafkito.compat;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Iterator;
import java.util.Map;
import java.util.Properties;

/** Client properties from a command: its bootstrap, its optional "login" and "config" objects. */
final class Conf {
    private Conf() {}

    static Properties of(JsonNode cmd) {
        Properties p = new Properties();
        p.put("bootstrap.servers", cmd.path("bootstrap").asText());
        p.put("reconnect.backoff.max.ms", "1000");
        JsonNode login = cmd.path("login");
        if (login.isObject()) {
            p.put("security.protocol", login.path("protocol").asText());
            if (!login.path("mechanism").isNull() && login.has("mechanism")) {
                String mechanism = login.path("mechanism").asText();
                String module = mechanism.startsWith("SCRAM")
                        ? "org.apache.kafka.common.security.scram.ScramLoginModule"
                        : "org.apache.kafka.common.security.plain.PlainLoginModule";
                p.put("sasl.mechanism", mechanism);
                p.put("sasl.jaas.config", module + " required username=\"" + login.path("user").asText()
                        + "\" password=\"" + login.path("password").asText() + "\";");
            }
            if (login.hasNonNull("ca")) {
                p.put("ssl.truststore.type", "PEM");
                p.put("ssl.truststore.location", login.path("ca").asText());
            }
        }
        JsonNode extra = cmd.path("config");
        for (Iterator<Map.Entry<String, JsonNode>> it = extra.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            p.put(e.getKey(), e.getValue().asText());
        }
        return p;
    }

    static Properties with(Properties base, String... pairs) {
        Properties p = new Properties();
        p.putAll(base);
        for (int i = 0; i < pairs.length; i += 2) {
            p.put(pairs[i], pairs[i + 1]);
        }
        return p;
    }
}
