package org.kafkito.streams;

import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.TreeSet;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.StreamsGroupDescription;
import org.apache.kafka.clients.admin.StreamsGroupMemberDescription;
import org.apache.kafka.clients.admin.StreamsGroupSubtopologyDescription;

import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * A streams group as the Java Admin client describes it ({@code Admin.describeStreamsGroups}), printed as one
 * JSON line: {@code DescribeGroup <bootstrap> <group>}.
 */
public final class DescribeGroup {
    private DescribeGroup() {
    }

    public static void main(String[] args) throws Exception {
        Properties props = new Properties();
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
        try (Admin admin = Admin.create(props)) {
            StreamsGroupDescription group = admin.describeStreamsGroups(List.of(args[1])).all().get().get(args[1]);
            Map<String, Object> out = new TreeMap<>();
            out.put("groupId", group.groupId());
            out.put("state", group.groupState().toString());
            out.put("groupEpoch", group.groupEpoch());
            out.put("targetAssignmentEpoch", group.targetAssignmentEpoch());
            out.put("topologyEpoch", group.topologyEpoch());
            Map<String, Object> subtopologies = new TreeMap<>();
            for (StreamsGroupSubtopologyDescription s : group.subtopologies()) {
                subtopologies.put(s.subtopologyId(), Map.of("sourceTopics", new TreeSet<>(s.sourceTopics()),
                    "repartitionSinkTopics", new TreeSet<>(s.repartitionSinkTopics())));
            }
            out.put("subtopologies", subtopologies);
            Map<String, Object> members = new TreeMap<>();
            for (StreamsGroupMemberDescription m : group.members()) {
                Map<String, Object> tasks = new TreeMap<>();
                m.assignment().activeTasks().forEach(t -> tasks.put(t.subtopologyId(), new TreeSet<>(t.partitions())));
                members.put(m.memberId(), Map.of("processId", m.processId(), "memberEpoch", m.memberEpoch(),
                    "activeTasks", tasks));
            }
            out.put("members", members);
            System.out.println(new ObjectMapper().writeValueAsString(out));
        }
    }
}
