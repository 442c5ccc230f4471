package io.kafkito.compat;

import com.fasterxml.jackson.databind.JsonNode;
import org.apache.kafka.clients.admin.Admin;

final class AdminCalls {
    private AdminCalls() {}

    static JsonNode call(Admin admin, String name, JsonNode args) throws Exception {
        throw new IllegalArgumentException("unknown admin call " + name);
    }
}
