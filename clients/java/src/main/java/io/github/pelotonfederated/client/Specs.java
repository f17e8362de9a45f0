package io.github.pelotonfederated.client;

import com.google.gson.Gson;
import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonPrimitive;
import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.EnumDescriptor;
import com.google.protobuf.Descriptors.EnumValueDescriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import com.google.protobuf.util.JsonFormat;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Map;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;
import peloton.v1.Types.JobSpec;
import peloton.v1.Types.PoolSpec;

/**
 * Job and pool specs from YAML or JSON, in the short forms the CLI takes: enum
 * values by short name in any case with '-' or '_' ({@code type: batch},
 * {@code op: not-in}) or full name, fields by JSON or proto name. The server
 * validates what it receives and names every bad field; nothing here repeats
 * those checks.
 */
public final class Specs {
  private static final Gson GSON = new Gson();

  private Specs() {}

  /** A JobSpec from a YAML or JSON file. */
  public static JobSpec loadJobSpec(Path file) throws IOException {
    return jobSpec(Files.readString(file));
  }

  /** A JobSpec from YAML or JSON text. */
  public static JobSpec jobSpec(String text) throws InvalidProtocolBufferException {
    JobSpec.Builder b = JobSpec.newBuilder();
    parse(text, b);
    return b.build();
  }

  /** A PoolSpec from a YAML or JSON file. */
  public static PoolSpec loadPoolSpec(Path file) throws IOException {
    PoolSpec.Builder b = PoolSpec.newBuilder();
    parse(Files.readString(file), b);
    return b.build();
  }

  /** The message as the JSON a spec file may hold. */
  public static String toJson(Message m) throws InvalidProtocolBufferException {
    return JsonFormat.printer().print(m);
  }

  private static void parse(String text, Message.Builder b) throws InvalidProtocolBufferException {
    Object doc = new Yaml(new SafeConstructor(new LoaderOptions())).load(text); // JSON is YAML too
    if (!(doc instanceof Map)) {
      throw new InvalidProtocolBufferException("the spec must be a mapping");
    }
    JsonElement tree = GSON.toJsonTree(doc);
    JsonFormat.parser().merge(GSON.toJson(normalise(tree.getAsJsonObject(), b.getDescriptorForType())), b);
  }

  private static JsonObject normalise(JsonObject obj, Descriptor d) {
    JsonObject out = new JsonObject();
    for (Map.Entry<String, JsonElement> e : obj.entrySet()) {
      FieldDescriptor f = d.findFieldByName(e.getKey());
      if (f == null) {
        f = d.getFields().stream().filter(x -> x.getJsonName().equals(e.getKey())).findFirst().orElse(null);
      }
      out.add(e.getKey(), f == null ? e.getValue() : field(f, e.getValue()));
    }
    return out;
  }

  private static JsonElement field(FieldDescriptor f, JsonElement v) {
    if (f.isMapField() && v.isJsonObject()) {
      FieldDescriptor vf = f.getMessageType().findFieldByName("value");
      JsonObject out = new JsonObject();
      v.getAsJsonObject().entrySet().forEach(e -> out.add(e.getKey(), single(vf, e.getValue())));
      return out;
    }
    if (v.isJsonArray()) {
      JsonArray out = new JsonArray();
      v.getAsJsonArray().forEach(x -> out.add(single(f, x)));
      return out;
    }
    return single(f, v);
  }

  private static JsonElement single(FieldDescriptor f, JsonElement v) {
    switch (f.getJavaType()) {
      case ENUM:
        return v.isJsonPrimitive() && v.getAsJsonPrimitive().isString()
            ? new JsonPrimitive(enumName(f.getEnumType(), v.getAsString()))
            : v;
      case MESSAGE:
        if (v.isJsonObject() && !f.getMessageType().getFullName().startsWith("google.protobuf.")) {
          return normalise(v.getAsJsonObject(), f.getMessageType());
        }
        return v;
      case STRING:
        // YAML reads `maxUnavailable: 2` as a number.
        if (v.isJsonPrimitive() && v.getAsJsonPrimitive().isNumber()) {
          return new JsonPrimitive(v.getAsJsonPrimitive().getAsNumber().toString());
        }
        return v;
      case INT:
      case LONG:
        // Gson turns YAML integers into doubles ("2.0"); protobuf wants integers.
        if (v.isJsonPrimitive() && v.getAsJsonPrimitive().isNumber()) {
          double d = v.getAsDouble();
          if (d == Math.rint(d)) {
            return new JsonPrimitive((long) d);
          }
        }
        return v;
      default:
        return v;
    }
  }

  static String enumName(EnumDescriptor e, String value) {
    if (e.findValueByName(value) != null) {
      return value;
    }
    EnumValueDescriptor zero = e.findValueByNumber(0);
    String prefix = zero != null && zero.getName().endsWith("UNSPECIFIED")
        ? zero.getName().substring(0, zero.getName().length() - "UNSPECIFIED".length())
        : "";
    String full = prefix + value.trim().toUpperCase(Locale.ROOT).replace('-', '_');
    return e.findValueByName(full) != null ? full : value; // unknown: protobuf names it
  }
}
