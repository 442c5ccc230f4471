package io.kafkito.connect;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.errors.ConnectException;
import org.apache.kafka.connect.source.SourceRecord;
import org.apache.kafka.connect.source.SourceTask;

/** Reads whole lines from the position its committed offset names; a partial last line waits. */
public class LineFileSourceTask extends SourceTask {
    private static final String POSITION = "position";
    private Map<String, String> partition;
    private String file;
    private String topic;
    private long position;

    @Override public String version() { return LineFileSource.VERSION; }

    @Override
    public void start(Map<String, String> props) {
        file = props.get("file");
        topic = props.get("topic");
        partition = Map.of("file", file);
        Map<String, Object> committed = context.offsetStorageReader().offset(partition);
        position = committed == null ? 0L : ((Number) committed.get(POSITION)).longValue();
    }

    @Override
    public List<SourceRecord> poll() throws InterruptedException {
        List<SourceRecord> records = new ArrayList<>();
        try (RandomAccessFile in = new RandomAccessFile(file, "r")) {
            if (in.length() <= position) {
                Thread.sleep(200);
                return null;
            }
            in.seek(position);
            byte[] rest = new byte[(int) Math.min(in.length() - position, 1 << 20)];
            in.readFully(rest);
            int start = 0;
            for (int i = 0; i < rest.length && records.size() < 500; i++) {
                if (rest[i] != '\n') continue;
                String line = new String(rest, start, i - start, StandardCharsets.UTF_8);
                long next = position + i + 1;
                records.add(new SourceRecord(partition, Map.of(POSITION, next), topic, null,
                    null, null, Schema.STRING_SCHEMA, line));
                start = i + 1;
            }
            position += start;
        } catch (IOException e) {
            throw new ConnectException("reading " + file, e);
        }
        if (records.isEmpty()) {
            Thread.sleep(200);
            return null;
        }
        return records;
    }

    @Override public void stop() { }
}
