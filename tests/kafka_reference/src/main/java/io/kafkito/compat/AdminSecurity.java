package io.kafkito.compat;

import static io.kafkito.compat.AdminCalls.each;
import static io.kafkito.compat.AdminCalls.error;
import static io.kafkito.compat.AdminCalls.get;
import static io.kafkito.compat.AdminCalls.sorted;
import static io.kafkito.compat.AdminCalls.stringList;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ScramCredentialInfo;
import org.apache.kafka.clients.admin.ScramMechanism;
import org.apache.kafka.clients.admin.UserScramCredentialAlteration;
import org.apache.kafka.clients.admin.UserScramCredentialDeletion;
import org.apache.kafka.clients.admin.UserScramCredentialUpsertion;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AccessControlEntryFilter;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.quota.ClientQuotaAlteration;
import org.apache.kafka.common.quota.ClientQuotaEntity;
import org.apache.kafka.common.quota.ClientQuotaFilter;
import org.apache.kafka.common.quota.ClientQuotaFilterComponent;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourcePatternFilter;
import org.apache.kafka.common.resource.ResourceType;

/** The Admin calls on ACLs, SCRAM credentials and client quotas, as in AdminCalls. */
final class AdminSecurity {
    private AdminSecurity() {}

    static JsonNode call(Admin admin, String name, JsonNode a) throws Exception {
        switch (name) {
            case "createAcls": return createAcls(admin, a);
            case "describeAcls": return bindings(get(admin.describeAcls(filter(a.path("filter"))).values()));
            case "deleteAcls": return deleteAcls(admin, a);
            case "describeUserScramCredentials": return describeScram(admin, a);
            case "alterUserScramCredentials": return alterScram(admin, a);
            case "describeClientQuotas": return describeQuotas(admin, a);
            case "alterClientQuotas": return alterQuotas(admin, a);
            default: throw new IllegalArgumentException("unknown admin call " + name);
        }
    }

    private static String text(JsonNode n, String field, String otherwise) {
        return n.hasNonNull(field) ? n.path(field).asText() : otherwise;
    }

    private static AclBinding binding(JsonNode b) {
        ResourcePattern pattern = new ResourcePattern(ResourceType.valueOf(b.path("resourceType").asText()),
                b.path("name").asText(), PatternType.valueOf(text(b, "patternType", "LITERAL")));
        AccessControlEntry entry = new AccessControlEntry(b.path("principal").asText(), text(b, "host", "*"),
                AclOperation.valueOf(b.path("operation").asText()),
                AclPermissionType.valueOf(text(b, "permission", "ALLOW")));
        return new AclBinding(pattern, entry);
    }

    private static AclBindingFilter filter(JsonNode f) {
        ResourcePatternFilter pattern = new ResourcePatternFilter(ResourceType.valueOf(text(f, "resourceType", "ANY")),
                text(f, "name", null), PatternType.valueOf(text(f, "patternType", "ANY")));
        AccessControlEntryFilter entry = new AccessControlEntryFilter(text(f, "principal", null), text(f, "host", null),
                AclOperation.valueOf(text(f, "operation", "ANY")), AclPermissionType.valueOf(text(f, "permission", "ANY")));
        return new AclBindingFilter(pattern, entry);
    }

    private static String describe(AclBinding b) {
        ResourcePattern p = b.pattern();
        AccessControlEntry e = b.entry();
        return String.join(" ", p.resourceType().toString(), p.name(), p.patternType().toString(), e.principal(),
                e.host(), e.operation().toString(), e.permissionType().toString());
    }

    private static ArrayNode bindings(Collection<AclBinding> bs) {
        return AdminCalls.strings(bs, AdminSecurity::describe);
    }

    private static JsonNode createAcls(Admin admin, JsonNode a) {
        List<AclBinding> bs = new ArrayList<>();
        a.path("bindings").forEach(b -> bs.add(binding(b)));
        return each(admin.createAcls(bs).values(), AdminSecurity::describe, AdminCalls::ok);
    }

    private static JsonNode deleteAcls(Admin admin, JsonNode a) {
        List<AclBindingFilter> filters = new ArrayList<>();
        a.path("filters").forEach(f -> filters.add(filter(f)));
        ObjectNode out = Out.object();
        var values = admin.deleteAcls(filters).values();
        for (int i = 0; i < filters.size(); i++) {
            try {
                List<AclBinding> deleted = new ArrayList<>();
                for (var r : get(values.get(filters.get(i))).values()) {
                    if (r.exception() != null) {
                        throw r.exception();
                    }
                    deleted.add(r.binding());
                }
                out.set(String.valueOf(i), bindings(deleted));
            } catch (Exception e) {
                out.set(String.valueOf(i), error(e));
            }
        }
        return out;
    }

    private static JsonNode describeScram(Admin admin, JsonNode a) throws Exception {
        List<String> users = stringList(a.path("users"));
        var r = admin.describeUserScramCredentials(users.isEmpty() ? null : users);
        ObjectNode out = Out.object();
        if (users.isEmpty()) {
            for (String u : get(r.users())) {
                users.add(u);
            }
        }
        for (String u : users) {
            try {
                ArrayNode infos = Out.array();
                for (ScramCredentialInfo i : get(r.description(u)).credentialInfos()) {
                    infos.add(i.mechanism().mechanismName() + ":" + i.iterations());
                }
                out.set(u, infos);
            } catch (Exception e) {
                out.set(u, error(e));
            }
        }
        return sorted(out);
    }

    private static JsonNode alterScram(Admin admin, JsonNode a) {
        List<UserScramCredentialAlteration> changes = new ArrayList<>();
        for (JsonNode u : a.path("upserts")) {
            ScramCredentialInfo info = new ScramCredentialInfo(ScramMechanism.fromMechanismName(u.path("mechanism").asText()),
                    u.path("iterations").asInt());
            changes.add(new UserScramCredentialUpsertion(u.path("user").asText(), info, u.path("password").asText()));
        }
        for (JsonNode d : a.path("deletions")) {
            changes.add(new UserScramCredentialDeletion(d.path("user").asText(),
                    ScramMechanism.fromMechanismName(d.path("mechanism").asText())));
        }
        return each(admin.alterUserScramCredentials(changes).values(), u -> u, AdminCalls::ok);
    }

    private static ClientQuotaEntity entity(JsonNode e) {
        Map<String, String> entries = new HashMap<>();
        e.fields().forEachRemaining(f -> entries.put(f.getKey(), f.getValue().isNull() ? null : f.getValue().asText()));
        return new ClientQuotaEntity(entries);
    }

    private static JsonNode describeQuotas(Admin admin, JsonNode a) throws Exception {
        List<ClientQuotaFilterComponent> components = new ArrayList<>();
        for (JsonNode c : a.path("components")) {
            String type = c.path("type").asText();
            if (c.path("default").asBoolean()) {
                components.add(ClientQuotaFilterComponent.ofDefaultEntity(type));
            } else if (c.has("match")) {
                components.add(ClientQuotaFilterComponent.ofEntity(type, c.path("match").asText()));
            } else {
                components.add(ClientQuotaFilterComponent.ofEntityType(type));
            }
        }
        ClientQuotaFilter filter = a.path("strict").asBoolean() ? ClientQuotaFilter.containsOnly(components)
                : ClientQuotaFilter.contains(components);
        ObjectNode out = Out.object();
        for (var e : get(admin.describeClientQuotas(filter).entities()).entrySet()) {
            ObjectNode values = Out.object();
            e.getValue().forEach(values::put);
            out.set(new java.util.TreeMap<>(e.getKey().entries()).toString(), sorted(values));
        }
        return sorted(out);
    }

    private static JsonNode alterQuotas(Admin admin, JsonNode a) {
        List<ClientQuotaAlteration> changes = new ArrayList<>();
        for (JsonNode c : a.path("alterations")) {
            List<ClientQuotaAlteration.Op> ops = new ArrayList<>();
            c.path("ops").fields().forEachRemaining(o -> ops.add(new ClientQuotaAlteration.Op(o.getKey(),
                    o.getValue().isNull() ? null : o.getValue().asDouble())));
            changes.add(new ClientQuotaAlteration(entity(c.path("entity")), ops));
        }
        return each(admin.alterClientQuotas(changes).values(), e -> new java.util.TreeMap<>(e.entries()).toString(),
                AdminCalls::ok);
    }
}
