package io.github.pelotonfederated.client;

import io.grpc.ClientInterceptor;
import io.grpc.Metadata;
import io.grpc.stub.MetadataUtils;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The bearer token a client sends. Given none, it is $PELOTON_TOKEN, and, for a loopback address
 * without one, the token a {@code peloton dev} cluster on that address keeps for its user's
 * clients: {@code <config dir>/peloton/dev/<host>_<port>.token}, where the config dir is
 * $XDG_CONFIG_HOME or ~/.config (as the CLI and the Python client find it). A token is never sent
 * in the clear to an address that is not loopback.
 */
public final class Tokens {
  private Tokens() {}

  static final Metadata.Key<String> AUTHORIZATION =
      Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);

  /** The token to send to addr ("host:port"): token, else $PELOTON_TOKEN, else a dev cluster's; or null. */
  public static String find(String addr, String token) {
    if (token == null || token.isEmpty()) {
      token = System.getenv("PELOTON_TOKEN");
    }
    boolean loopback = isLoopback(host(addr));
    if (token != null && !token.isEmpty()) {
      if (!loopback) {
        throw new IllegalArgumentException("refusing to send a token in the clear to " + addr);
      }
      return token;
    }
    if (!loopback) {
      return null;
    }
    String host = host(addr);
    String port = addr.substring(addr.lastIndexOf(':') + 1);
    List<String> hosts = new ArrayList<>(List.of(host));
    if (host.equals("localhost")) {
      hosts.add("127.0.0.1");
      hosts.add("::1");
    }
    for (String h : hosts) {
      try {
        String t = Files.readString(devTokenFile(h, port), StandardCharsets.UTF_8).strip();
        return t.isEmpty() ? null : t;
      } catch (NoSuchFileException e) {
        // no dev cluster of this user on that address
      } catch (IOException e) {
        throw new UncheckedIOException("the dev cluster's token", e);
      }
    }
    return null;
  }

  /** Where a dev cluster listening on host:port keeps its token. */
  public static Path devTokenFile(String host, String port) {
    String base = System.getenv("XDG_CONFIG_HOME");
    Path dir = base != null && !base.isEmpty()
        ? Path.of(base)
        : Path.of(System.getProperty("user.home"), ".config");
    return dir.resolve("peloton").resolve("dev").resolve(host + "_" + port + ".token");
  }

  /** An interceptor adding {@code authorization: Bearer <token>} to every call. */
  public static ClientInterceptor bearer(String token) {
    Metadata md = new Metadata();
    md.put(AUTHORIZATION, "Bearer " + token);
    return MetadataUtils.newAttachHeadersInterceptor(md);
  }

  private static String host(String addr) {
    int colon = addr.lastIndexOf(':');
    String h = colon < 0 ? addr : addr.substring(0, colon);
    return h.startsWith("[") && h.endsWith("]") ? h.substring(1, h.length() - 1) : h;
  }

  private static boolean isLoopback(String host) {
    if (host.equals("localhost")) {
      return true;
    }
    if (!host.matches("[0-9.]+") && !host.contains(":")) {
      return false; // a name: not resolved here
    }
    try {
      return InetAddress.getByName(host).isLoopbackAddress();
    } catch (UnknownHostException e) {
      return false;
    }
  }
}
