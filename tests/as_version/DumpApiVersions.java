import org.apache.kafka.common.message.ApiMessageType;
import org.apache.kafka.common.protocol.ApiKeys;

public class DumpApiVersions {
    public static void main(String[] args) {
        ApiMessageType.ListenerType listener = ApiMessageType.ListenerType.valueOf(args[0]);
        StringBuilder out = new StringBuilder();
        for (ApiKeys key : ApiKeys.apisForListener(listener)) {
            out.append(key.id).append(':').append(key.oldestVersion()).append('-').append(key.latestVersion(false)).append(' ');
        }
        System.out.println(out.toString().trim());
    }
}
