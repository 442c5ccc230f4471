package io.kafkito.connect;

import java.util.List;
import java.util.Map;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.connect.connector.Task;
import org.apache.kafka.connect.sink.SinkConnector;

/**
 * A sink connector that appends each record's value to a text file, one line a record, as Kafka's
 * FileStreamSink does; the worker commits the group's offsets after the task's flush.
 */
public class LineFileSink extends SinkConnector {
    static final ConfigDef CONFIG = new ConfigDef()
        .define("file", ConfigDef.Type.STRING, ConfigDef.Importance.HIGH, "the file to append to");
    private Map<String, String> props;

    @Override public String version() { return LineFileSource.VERSION; }
    @Override public void start(Map<String, String> props) { this.props = props; }
    @Override public Class<? extends Task> taskClass() { return LineFileSinkTask.class; }
    @Override public List<Map<String, String>> taskConfigs(int maxTasks) { return List.of(props); }
    @Override public void stop() { }
    @Override public ConfigDef config() { return CONFIG; }
}
