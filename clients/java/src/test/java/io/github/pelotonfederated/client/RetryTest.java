package io.github.pelotonfederated.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.Any;
import com.google.rpc.RetryInfo;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.protobuf.StatusProto;
import java.io.InputStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import peloton.v1.JobServiceGrpc;
import peloton.v1.Types.Job;
import peloton.v1.Types.JobSpec;

/**
 * Retries of shed calls: the backoff, the rules, and a `peloton dev` whose in-flight limit is one
 * call, hammered by many threads so that it sheds.
 */
class RetryTest {
  static DevCluster dev;

  @BeforeAll
  static void start() throws Exception {
    dev = new DevCluster("--limit-in-flight", "1", "--limit-in-flight-wait", "1ms");
  }

  @AfterAll
  static void stop() throws Exception {
    if (dev != null) {
      dev.close();
    }
  }

  static Duration ms(long n) {
    return Duration.ofMillis(n);
  }

  @Test
  void backoff() {
    assertEquals(ms(200), Retry.backoff(0, null, 0.5));
    assertEquals(ms(400), Retry.backoff(1, null, 0.5));
    assertEquals(ms(5000), Retry.backoff(10, null, 0.5), "capped");
    assertEquals(ms(160), Retry.backoff(0, null, 0.0), "-20 %");
    assertEquals(ms(6000), Retry.backoff(10, null, 1.0), "+20 % of the cap");
    assertEquals(ms(1000), Retry.backoff(0, ms(1000), 0.0), "at least the hint");
    assertEquals(ms(1100), Retry.backoff(0, ms(1000), 0.5), "spread above it");
    assertEquals(ms(1600), Retry.backoff(3, ms(1000), 0.5), "the backoff once it passes the hint");
    assertEquals(Duration.ofSeconds(30), Retry.backoff(0, Duration.ofHours(1), 0.0), "a hint counts for 30 s at most");
  }

  @Test
  void backoffBounds() {
    Random rnd = new Random(7);
    Duration[] hints = {null, ms(50), ms(1000), ms(4000), ms(10_000), ms(100_000)};
    for (int i = 0; i < 5000; i++) {
      int n = rnd.nextInt(12);
      double u = rnd.nextDouble();
      Duration hint = hints[rnd.nextInt(hints.length)];
      long base = Math.min(200L << n, 5000) * 1_000_000L;
      long d = Retry.backoff(n, hint, u).toNanos();
      if (hint == null) {
        assertTrue(d >= 0.8 * base - 1 && d <= 1.2 * base + 1, n + " " + u + ": " + d);
      } else {
        long h = Math.min(hint.toNanos(), Duration.ofSeconds(30).toNanos());
        assertTrue(d >= h && d <= 1.2 * Math.max(base, h) + 1, n + " " + hint + " " + u + ": " + d);
      }
    }
  }

  static StatusRuntimeException shed(Duration hint) {
    com.google.rpc.Status.Builder st = com.google.rpc.Status.newBuilder()
        .setCode(Status.Code.RESOURCE_EXHAUSTED.value()).setMessage("busy");
    if (hint != null) {
      st.addDetails(Any.pack(RetryInfo.newBuilder()
          .setRetryDelay(com.google.protobuf.Duration.newBuilder().setSeconds(hint.getSeconds())).build()));
    }
    return StatusProto.toStatusRuntimeException(st.build());
  }

  @Test
  void rules() {
    StatusRuntimeException unavailable = Status.UNAVAILABLE.asRuntimeException();
    // Shed for load: any call, after at least the hint.
    assertEquals(Duration.ofSeconds(2), Retry.after(JobServiceGrpc.getCreateJobMethod(), shed(Duration.ofSeconds(2)), 0, 0.0));
    // Over a size limit: no hint, final.
    assertNull(Retry.after(JobServiceGrpc.getGetJobMethod(), shed(null), 0, 0.5));
    // Unavailable: a read is sent again, a write (it may have been done) is not.
    assertEquals(ms(400), Retry.after(JobServiceGrpc.getGetJobMethod(), unavailable, 1, 0.5));
    assertNull(Retry.after(JobServiceGrpc.getCreateJobMethod(), unavailable, 0, 0.5));
    assertNull(Retry.after(JobServiceGrpc.getGetJobMethod(), Status.INVALID_ARGUMENT.asRuntimeException(), 0, 0.5));
    assertThrows(IllegalArgumentException.class, () -> new PelotonClient(dev.addr, 0));
  }

  static long shedTotal() throws Exception {
    java.net.URLConnection conn = URI.create("http://" + dev.addr + "/metrics").toURL().openConnection();
    conn.setRequestProperty("Authorization", "Bearer " + Tokens.find(dev.addr, null));
    try (InputStream in = conn.getInputStream()) {
      String text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
      Matcher m = Pattern.compile("^peloton_gateway_calls_shed_total (\\d+)$", Pattern.MULTILINE).matcher(text);
      assertTrue(m.find(), "no shed counter in /metrics");
      return Long.parseLong(m.group(1));
    }
  }

  interface Work {
    void run(int i) throws Exception;
  }

  /** Runs work(i) on `threads` threads started together; returns the PelotonExceptions raised. */
  static List<PelotonException> hammer(int threads, Work work) throws Exception {
    List<PelotonException> errors = new ArrayList<>();
    CountDownLatch start = new CountDownLatch(1);
    List<Thread> ts = new ArrayList<>();
    List<Throwable> broken = new ArrayList<>();
    for (int i = 0; i < threads; i++) {
      int k = i;
      Thread t = new Thread(() -> {
        try {
          start.await();
          work.run(k);
        } catch (PelotonException e) {
          synchronized (errors) {
            errors.add(e);
          }
        } catch (Exception e) {
          synchronized (broken) {
            broken.add(e);
          }
        }
      });
      t.start();
      ts.add(t);
    }
    start.countDown();
    for (Thread t : ts) {
      t.join();
    }
    assertEquals(List.of(), broken);
    return errors;
  }

  static JobSpec job(String name) throws Exception {
    return Specs.jobSpec("{name: " + name + ", type: batch, instances: 1,"
        + " task: {command: 'true', resources: {cpu: 0.01, memMb: 4}}}");
  }

  @Test
  void shedCallsAreRetriedAndSucceed() throws Exception {
    List<String> created = new ArrayList<>();
    long shed = 0;
    try (PelotonClient c = new PelotonClient(dev.addr)) {
      // Rounds until the server shed some calls (it does in the first on
      // any machine seen so far; the bound keeps a failure short).
      for (int round = 0; round < 5 && shed == 0; round++) {
        long before = shedTotal();
        int r = round;
        List<PelotonException> errors = hammer(32, i -> {
          Job j = c.createJob(job("java-shed-" + r + "-" + i));
          synchronized (created) {
            created.add(j.getId());
          }
          for (int k = 0; k < 4; k++) {
            c.getJob(j.getId());
            c.listJobs(Set.of(), "", 5);
          }
        });
        assertEquals(List.of(), errors);
        shed += shedTotal() - before;
      }
      System.out.printf("%d creates and %d calls in all; %d shed, %d sent again%n",
          created.size(), created.size() * 9, shed, c.retried());
      assertTrue(shed > 0, "the server shed nothing: the test did not test retries");
      // Every shed call was sent again, and only those.
      assertEquals(shed, c.retried());
      // A shed create ran nothing: each job exists once.
      List<String> names = new ArrayList<>();
      for (Job j : c.listJobs(Set.of(), "")) {
        if (j.getSpec().getName().startsWith("java-shed-")) {
          names.add(j.getSpec().getName());
        }
      }
      assertEquals(created.size(), names.size());
      assertEquals(names.size(), new HashSet<>(names).size());
      assertEquals(created.size(), new HashSet<>(created).size());
    }
  }

  @Test
  void withoutRetriesTheCallerSeesResourceExhausted() throws Exception {
    try (PelotonClient c = new PelotonClient(dev.addr, 1)) {
      List<PelotonException> errors = List.of();
      long shed = 0;
      for (int round = 0; round < 5 && errors.isEmpty(); round++) {
        long before = shedTotal();
        errors = hammer(32, i -> {
          for (int k = 0; k < 20; k++) {
            c.listJobs(Set.of(), "", 5);
          }
        });
        shed = shedTotal() - before;
      }
      System.out.printf("%d callers stopped by a refusal; %d calls shed%n", errors.size(), shed);
      assertTrue(!errors.isEmpty(), "the server shed nothing");
      for (PelotonException e : errors) {
        assertEquals(Status.Code.RESOURCE_EXHAUSTED, e.code());
        assertEquals(Duration.ofSeconds(1), e.retryDelay().orElseThrow());
      }
      // Each thread stops at its first refusal: one shed call each.
      assertEquals(shed, errors.size());
      assertEquals(0, c.retried());
    }
  }
}
