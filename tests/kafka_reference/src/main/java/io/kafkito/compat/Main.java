package io.kafkito.compat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * The Java client driver of kafkito's tests: one long-lived JVM that runs many commands, so that the
 * JVM starts once per test session.
 *
 * <p>Each line on stdin is a JSON command {"id": n, "op": "...", ...}. Commands run concurrently, each
 * on a thread of its own, and each is answered by one line {"id": n, "ok": true, "result": ...} or
 * {"id": n, "ok": false, "error": "...", "errorClass": "..."}. Consumers started by a command report
 * their events as lines {"consumer": "name", "type": ...} until they are stopped. The JVM exits when
 * stdin closes.
 */
public final class Main {
    private Main() {}

    public static void main(String[] args) throws Exception {
        Out.init();
        ExecutorService pool = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "command");
            t.setDaemon(true);
            return t;
        });
        Ops ops = new Ops();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        Out.emit(Out.object().put("ready", true));
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isBlank()) {
                continue;
            }
            JsonNode cmd = Out.MAPPER.readTree(line);
            pool.submit(() -> run(ops, cmd));
        }
        ops.closeAll();
        System.exit(0);
    }

    private static void run(Ops ops, JsonNode cmd) {
        long id = cmd.path("id").asLong();
        ObjectNode answer = Out.object().put("id", id);
        try {
            answer.put("ok", true).set("result", ops.run(cmd));
        } catch (Throwable e) {
            Throwable cause = Errors.unwrap(e);
            answer.put("ok", false).put("errorClass", cause.getClass().getSimpleName());
            answer.put("error", String.valueOf(cause.getMessage())).put("trace", Errors.trace(e));
        }
        Out.emit(answer);
    }
}
