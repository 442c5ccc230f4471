// Prints, as JSON on stdout, the broker and topic config definitions of the Kafka on the classpath:
// each ConfigKey of the broker's ConfigDef (AbstractKafkaConfig.CONFIG_DEF) and of the topic's
// (LogConfig.configKeys()) with its type, default (as Kafka renders it), importance, whether it is
// internal and documented; for the broker, whether DynamicBrokerConfig lets it change at run time and its
// synonyms; for topics, the broker config each one follows (ServerTopicConfigSynonyms).
//
// Run by tests/kafka_reference/generate_config_defs.py, which writes broker/kafka_config_defs.py from it:
//   java -cp "$(cat tests/kafka_reference/target/classpath.txt)" tests/kafka_reference/DumpConfigDefs.java
// (a single-file program: Java 17 compiles it in memory, nothing is built).

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.server.config.AbstractKafkaConfig;
import org.apache.kafka.server.config.ConfigSynonym;
import org.apache.kafka.server.config.DynamicBrokerConfig;
import org.apache.kafka.server.config.ServerTopicConfigSynonyms;
import org.apache.kafka.storage.internals.log.LogConfig;

public class DumpConfigDefs {
    public static void main(String[] args) {
        StringBuilder out = new StringBuilder("{\n");
        out.append(" \"kafka_version\": ").append(str(org.apache.kafka.common.utils.internals.AppInfoParser.getVersion()))
            .append(",\n");
        out.append(" \"broker\": [\n");
        List<String> rows = new ArrayList<>();
        for (ConfigDef.ConfigKey key : new TreeMap<>(AbstractKafkaConfig.CONFIG_DEF.configKeys()).values()) {
            List<String> synonyms = DynamicBrokerConfig.brokerConfigSynonyms(key.name, false);
            rows.add("  {" + common(key)
                + ", \"dynamic\": " + DynamicBrokerConfig.ALL_DYNAMIC_CONFIGS.contains(key.name)
                + ", \"synonyms\": " + list(synonyms) + "}");
        }
        out.append(String.join(",\n", rows)).append("\n ],\n");
        out.append(" \"dynamic_security\": ").append(list(new ArrayList<>(
            new TreeSet<>(DynamicBrokerConfig.DYNAMIC_SECURITY_CONFIGS)))).append(",\n");
        out.append(" \"topic\": [\n");
        rows.clear();
        Map<String, List<ConfigSynonym>> all = ServerTopicConfigSynonyms.ALL_TOPIC_CONFIG_SYNONYMS;
        for (ConfigDef.ConfigKey key : new TreeMap<>(LogConfig.configKeys()).values()) {
            List<String> brokerNames = new ArrayList<>();
            for (ConfigSynonym s : all.getOrDefault(key.name, List.of())) {
                brokerNames.add(s.name());
            }
            rows.add("  {" + common(key)
                + ", \"broker_synonym\": " + str(ServerTopicConfigSynonyms.TOPIC_CONFIG_SYNONYMS.get(key.name))
                + ", \"broker_synonyms\": " + list(brokerNames) + "}");
        }
        out.append(String.join(",\n", rows)).append("\n ]\n}\n");
        System.out.print(out);
    }

    private static String common(ConfigDef.ConfigKey key) {
        boolean hasDefault = key.hasDefault();
        String dflt = hasDefault && key.defaultValue != null
            ? ConfigDef.convertToString(key.defaultValue, key.type) : null;
        return "\"name\": " + str(key.name)
            + ", \"type\": " + str(key.type.name())
            + ", \"has_default\": " + hasDefault
            + ", \"default\": " + str(dflt)
            + ", \"importance\": " + str(key.importance == null ? null : key.importance.name())
            + ", \"internal\": " + key.internalConfig
            + ", \"documented\": " + (key.documentation != null && !key.documentation.isEmpty())
            + ", \"validator\": " + str(key.validator == null ? null : key.validator.toString());
    }

    private static String list(List<String> items) {
        List<String> quoted = new ArrayList<>();
        for (String item : items) {
            quoted.add(str(item));
        }
        return "[" + String.join(", ", quoted) + "]";
    }

    private static String str(String s) {
        if (s == null) {
            return "null";
        }
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                case '\n' -> b.append("\\n");
                case '\t' -> b.append("\\t");
                case '\r' -> b.append("\\r");
                default -> {
                    if (c < 0x20) {
                        b.append(String.format("\\u%04x", (int) c));
                    } else {
                        b.append(c);
                    }
                }
            }
        }
        return b.append('"').toString();
    }
}
