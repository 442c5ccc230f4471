package io.kafkito.compat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.FileOutputStream;
import java.io.FileDescriptor;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Base64;

/** The driver's output: JSON lines on the process's real stdout, one writer at a time. */
final class Out {
    static final ObjectMapper MAPPER = new ObjectMapper();
    private static PrintStream stdout;

    private Out() {}

    /** Keeps the real stdout for JSON lines; anything else printed (a library, a default logger) goes to stderr. */
    static void init() {
        stdout = new PrintStream(new FileOutputStream(FileDescriptor.out), false, StandardCharsets.UTF_8);
        System.setOut(System.err);
    }

    static synchronized void emit(JsonNode event) {
        stdout.println(event.toString());
        stdout.flush();
    }

    static ObjectNode object() {
        return MAPPER.createObjectNode();
    }

    static ArrayNode array() {
        return MAPPER.createArrayNode();
    }

    static String b64(byte[] data) {
        return data == null ? null : Base64.getEncoder().encodeToString(data);
    }

    static byte[] unb64(JsonNode text) {
        return text == null || text.isNull() ? null : Base64.getDecoder().decode(text.asText());
    }
}
