import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/**
 * kafka-streams-groups.sh's main class (StreamsGroupCommand, kafka-tools 4.4) run once per line of stdin,
 * its arguments separated by tabs, all in one JVM: each run's stdout, stderr and exit code are printed
 * between markers, and the next line is read only then (so the caller may change the group in between).
 * Run with Java's source launcher: java -cp CLASSPATH StreamsGroupCommandDriver.java
 */
public class StreamsGroupCommandDriver {
    public static void main(String[] args) throws Exception {
        PrintStream out = System.out;
        PrintStream err = System.err;
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line; (line = in.readLine()) != null; ) {
            ByteArrayOutputStream runOut = new ByteArrayOutputStream();
            ByteArrayOutputStream runErr = new ByteArrayOutputStream();
            System.setOut(new PrintStream(runOut, true, StandardCharsets.UTF_8));
            System.setErr(new PrintStream(runErr, true, StandardCharsets.UTF_8));
            int rc;
            try {
                rc = org.apache.kafka.tools.streams.StreamsGroupCommand.execute(line.split("\t"));
            } catch (Throwable t) {
                t.printStackTrace();
                rc = -1;
            }
            System.out.flush();
            System.err.flush();
            System.setOut(out);
            System.setErr(err);
            out.print("@@stdout\n" + runOut.toString(StandardCharsets.UTF_8) + "@@stderr\n"
                + runErr.toString(StandardCharsets.UTF_8) + "@@rc " + rc + "\n@@end\n");
            out.flush();
        }
    }
}
