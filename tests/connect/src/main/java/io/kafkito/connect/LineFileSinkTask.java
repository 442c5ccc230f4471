package io.kafkito.connect;

import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Collection;
import java.util.Map;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.connect.errors.ConnectException;
import org.apache.kafka.connect.sink.SinkRecord;
import org.apache.kafka.connect.sink.SinkTask;

/** Appends "topic/partition/offset value" lines, so a test can tell a redelivery from a duplicate. */
public class LineFileSinkTask extends SinkTask {
    private OutputStream out;

    @Override public String version() { return LineFileSource.VERSION; }

    @Override
    public void start(Map<String, String> props) {
        try {
            out = new FileOutputStream(props.get("file"), true);
        } catch (IOException e) {
            throw new ConnectException("opening " + props.get("file"), e);
        }
    }

    @Override
    public void put(Collection<SinkRecord> records) {
        StringBuilder lines = new StringBuilder();
        for (SinkRecord r : records) {
            lines.append(r.topic()).append('/').append(r.kafkaPartition()).append('/')
                .append(r.kafkaOffset()).append(' ').append(r.value()).append('\n');
        }
        try {
            out.write(lines.toString().getBytes(StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new ConnectException("writing", e);
        }
    }

    @Override
    public void flush(Map<TopicPartition, OffsetAndMetadata> offsets) {
        try {
            out.flush();
        } catch (IOException e) {
            throw new ConnectException("flushing", e);
        }
    }

    @Override
    public void stop() {
        try {
            if (out != null) out.close();
        } catch (IOException e) {
            throw new ConnectException("closing", e);
        }
    }
}
