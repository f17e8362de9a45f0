package io.github.pelotonfederated.client;

import java.io.File;
import java.io.IOException;
import java.net.HttpURLConnection;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/** A `peloton dev` started for the tests: $PELOTON_BIN, else ../../bin/peloton, with extra flags. */
final class DevCluster implements AutoCloseable {
  final String addr;
  private final Path dir;
  private final Path log;
  private final Process proc;

  DevCluster(String... extra) throws Exception {
    String bin = System.getenv("PELOTON_BIN");
    if (bin == null || bin.isEmpty()) {
      bin = Path.of("..", "..", "bin", "peloton").toAbsolutePath().normalize().toString();
    }
    if (!new File(bin).canExecute()) {
      throw new IllegalStateException("no peloton binary at " + bin + ": run `make build` or set PELOTON_BIN");
    }
    try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      addr = "127.0.0.1:" + s.getLocalPort();
    }
    dir = Files.createTempDirectory("peloton-junit-");
    log = dir.resolve("dev.log");
    List<String> args = new ArrayList<>(List.of(bin, "dev", "--data-dir", dir.resolve("data").toString(), "--addr", addr));
    args.addAll(List.of(extra));
    proc = new ProcessBuilder(args).redirectErrorStream(true).redirectOutput(log.toFile()).start();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (true) {
      if (!proc.isAlive()) {
        throw new IllegalStateException("peloton dev exited early:\n" + Files.readString(log));
      }
      try {
        HttpURLConnection c = (HttpURLConnection) URI.create("http://" + addr + "/healthz").toURL().openConnection();
        c.setConnectTimeout(1000);
        if (c.getResponseCode() == 200) {
          return;
        }
      } catch (IOException notYet) {
        // keep polling
      }
      if (System.nanoTime() > deadline) {
        close();
        throw new IllegalStateException("peloton dev not healthy after 30s:\n" + Files.readString(log));
      }
      Thread.sleep(50);
    }
  }

  @Override
  public void close() throws Exception {
    if (proc.isAlive()) {
      // SIGTERM: the dev cluster stops cleanly on it as on Ctrl-C.
      proc.destroy();
      if (!proc.waitFor(20, TimeUnit.SECONDS)) {
        proc.destroyForcibly().waitFor();
      }
    }
    try (Stream<Path> files = Files.walk(dir)) {
      files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    }
  }
}
