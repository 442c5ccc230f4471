package io.kafkito.connect;

import java.util.List;
import java.util.Map;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.connect.connector.Task;
import org.apache.kafka.connect.source.SourceConnector;

/**
 * A source connector that moves a text file's lines into a topic, one record a line, as Kafka's
 * FileStreamSource does. Its task keeps the byte position after the last line it read as the
 * source offset, so a task restarted anywhere resumes after what the worker committed.
 * (connect-file 4.3.1, the newest on Maven Central, calls a class Kafka 4.4 moved and cannot load.)
 */
public class LineFileSource extends SourceConnector {
    static final String VERSION = "1";
    static final ConfigDef CONFIG = new ConfigDef()
        .define("file", ConfigDef.Type.STRING, ConfigDef.Importance.HIGH, "the file to read")
        .define("topic", ConfigDef.Type.STRING, ConfigDef.Importance.HIGH, "the topic to write");
    private Map<String, String> props;

    @Override public String version() { return VERSION; }
    @Override public void start(Map<String, String> props) { this.props = props; }
    @Override public Class<? extends Task> taskClass() { return LineFileSourceTask.class; }
    @Override public List<Map<String, String>> taskConfigs(int maxTasks) { return List.of(props); }
    @Override public void stop() { }
    @Override public ConfigDef config() { return CONFIG; }
}
