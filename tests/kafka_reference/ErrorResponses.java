// Answers, with Kafka's own request classes, how Kafka fails a request as a whole: for each request on
// stdin it parses the body with AbstractRequest.parseRequest, calls getErrorResponse(0, exception) and
// writes the response body serialized at the request's version.
//
// Input, one request a line: "<api key> <version> <error code> <message or -> <body as hex>"
//   (message "-": Errors.forCode(code).exception(), the error's own text; otherwise that text, spaces
//   written as '+').
// Output, one line each, in order: "ok <response hex>", "none" (getErrorResponse answered null: no
// response), or "fail <exception class>: <text>" (Kafka cannot parse or answer that request/version).
//
// Run by tests/protocol/test_error_answers_vs_kafka.py as a single-file program (Java 17 compiles it in
// memory, nothing is built):
//   java -cp "$(cat tests/kafka_reference/target/classpath.txt)" tests/kafka_reference/ErrorResponses.java

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.protocol.MessageUtil;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AbstractResponse;

public class ErrorResponses {
    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isBlank()) {
                continue;
            }
            out.println(answer(line.trim().split(" ", -1)));
        }
        out.flush();
    }

    private static String answer(String[] parts) {
        try {
            ApiKeys api = ApiKeys.forId(Integer.parseInt(parts[0]));
            short version = Short.parseShort(parts[1]);
            Errors error = Errors.forCode(Short.parseShort(parts[2]));
            Throwable failure = parts[3].equals("-")
                ? error.exception()
                : error.exception(parts[3].replace('+', ' '));
            ByteBuffer body = ByteBuffer.wrap(unhex(parts.length > 4 ? parts[4] : ""));
            AbstractRequest request = AbstractRequest.parseRequest(api, version, new ByteBufferAccessor(body))
                .request;
            AbstractResponse response = request.getErrorResponse(0, failure);
            if (response == null) {
                return "none";
            }
            ByteBuffer bytes = MessageUtil.toByteBufferAccessor(response.data(), version).buffer();
            return "ok " + hex(MessageUtil.byteBufferToArray(bytes));
        } catch (Throwable t) {
            return "fail " + t.getClass().getSimpleName() + ": " + String.valueOf(t.getMessage()).replace('\n', ' ');
        }
    }

    private static byte[] unhex(String s) {
        byte[] out = new byte[s.length() / 2];
        for (int i = 0; i < out.length; i++) {
            out[i] = (byte) Integer.parseInt(s.substring(2 * i, 2 * i + 2), 16);
        }
        return out;
    }

    private static String hex(byte[] bytes) {
        StringBuilder sb = new StringBuilder(bytes.length * 2);
        for (byte b : bytes) {
            sb.append(String.format("%02x", b));
        }
        return sb.toString();
    }
}
