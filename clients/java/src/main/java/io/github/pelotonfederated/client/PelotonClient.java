package io.github.pelotonfederated.client;

import io.grpc.CallOptions;
import io.grpc.Context;
import io.grpc.Deadline;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ClientCalls;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumSet;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.Predicate;
import peloton.v1.EventServiceGrpc;
import peloton.v1.JobServiceGrpc;
import peloton.v1.PoolServiceGrpc;
import peloton.v1.Service.CreateJobRequest;
import peloton.v1.Service.CreatePoolRequest;
import peloton.v1.Service.GetJobConfigRequest;
import peloton.v1.Service.GetJobRequest;
import peloton.v1.Service.GetPoolRequest;
import peloton.v1.Service.GetTaskLogsRequest;
import peloton.v1.Service.ListJobsRequest;
import peloton.v1.Service.ListJobsResponse;
import peloton.v1.Service.ListTasksRequest;
import peloton.v1.Service.ResumeJobRequest;
import peloton.v1.Service.RunJobRequest;
import peloton.v1.Service.StopJobRequest;
import peloton.v1.Service.SuspendJobRequest;
import peloton.v1.Service.UpdateJobRequest;
import peloton.v1.Service.WatchRequest;
import peloton.v1.TaskServiceGrpc;
import peloton.v1.Types.Event;
import peloton.v1.Types.Job;
import peloton.v1.Types.JobSpec;
import peloton.v1.Types.JobState;
import peloton.v1.Types.Pool;
import peloton.v1.Types.PoolSpec;
import peloton.v1.Types.Task;
import peloton.v1.Types.Update;

/**
 * A thin client of the Peloton gRPC API. Each method is one or two calls of
 * the generated stubs (package {@code peloton.v1}) and returns the generated
 * messages; API errors are thrown as {@link PelotonException}. A call the server shed for load
 * is sent again after a backoff (see {@link #PelotonClient(ManagedChannel, Duration, int)}).
 *
 * <pre>{@code
 * try (PelotonClient c = new PelotonClient("127.0.0.1:5390")) {
 *   Job job = c.createJob(Path.of("examples/hello.yaml"));
 *   c.waitJob(job.getId(), Duration.ofMinutes(1), j -> System.out.println(j.getStatus().getState()));
 * }
 * }</pre>
 */
public final class PelotonClient implements AutoCloseable {
  /** The states a job ends in. */
  public static final Set<JobState> TERMINAL =
      EnumSet.of(JobState.JOB_STATE_SUCCEEDED, JobState.JOB_STATE_FAILED, JobState.JOB_STATE_KILLED);

  /** The sends of one unary call by default: the first and five retries. */
  public static final int DEFAULT_MAX_ATTEMPTS = Retry.DEFAULT_MAX_ATTEMPTS;

  private final ManagedChannel channel;
  private final Duration timeout;
  private final int maxAttempts;
  private final AtomicLong retried = new AtomicLong();
  private final EventServiceGrpc.EventServiceBlockingStub events;

  /** A client of the gateway at addr ("host:port"); null means $PELOTON_ADDR, then 127.0.0.1:5390. */
  public PelotonClient(String addr) {
    this(addr, DEFAULT_MAX_ATTEMPTS);
  }

  /**
   * As {@link #PelotonClient(String)}, with at most maxAttempts sends of each call (1: no retries).
   * It sends $PELOTON_TOKEN, or, to a loopback address, the token of the {@code peloton dev}
   * cluster there ({@link Tokens}).
   */
  public PelotonClient(String addr, int maxAttempts) {
    this(plaintext(resolve(addr), null), Duration.ofSeconds(30), maxAttempts);
  }

  /** A client of the gateway at addr that sends token (null: as {@link #PelotonClient(String, int)}). */
  public PelotonClient(String addr, String token, int maxAttempts) {
    this(plaintext(resolve(addr), token), Duration.ofSeconds(30), maxAttempts);
  }

  private static ManagedChannel plaintext(String addr, String token) {
    ManagedChannelBuilder<?> b = ManagedChannelBuilder.forTarget(addr).usePlaintext();
    String t = Tokens.find(addr, token);
    if (t != null) {
      b.intercept(Tokens.bearer(t));
    }
    return b.build();
  }

  /** A client over a channel the caller built (TLS, credentials); timeout bounds each unary call. */
  public PelotonClient(ManagedChannel channel, Duration timeout) {
    this(channel, timeout, DEFAULT_MAX_ATTEMPTS);
  }

  /**
   * A client over a channel the caller built. timeout is the deadline of each unary call, its
   * retries included; maxAttempts bounds its sends (1 turns retries off). A call the server shed
   * for load (RESOURCE_EXHAUSTED with a RetryInfo hint: nothing of it ran), or a read that found
   * the server UNAVAILABLE, is sent again after a backoff that doubles from 200 ms to 5 s with
   * ±20 % jitter and is never shorter than the server's hint; a wait that would pass the deadline
   * ends the call with the last error.
   */
  public PelotonClient(ManagedChannel channel, Duration timeout, int maxAttempts) {
    if (maxAttempts < 1) {
      throw new IllegalArgumentException("maxAttempts: must be at least 1, not " + maxAttempts);
    }
    this.channel = channel;
    this.timeout = timeout;
    this.maxAttempts = maxAttempts;
    this.events = EventServiceGrpc.newBlockingStub(channel);
  }

  /** How many calls were sent again after a refusal, since the client was made. */
  public long retried() {
    return retried.get();
  }

  private static String resolve(String addr) {
    if (addr != null && !addr.isEmpty()) {
      return addr;
    }
    String env = System.getenv("PELOTON_ADDR");
    return env != null && !env.isEmpty() ? env : "127.0.0.1:5390";
  }

  /** One unary call, sent again as {@link Retry} allows within its deadline and maxAttempts. */
  private <Q, R> R call(MethodDescriptor<Q, R> method, Q req) {
    Deadline deadline = Deadline.after(timeout.toNanos(), TimeUnit.NANOSECONDS);
    for (int n = 0; ; n++) {
      if (n > 0) {
        retried.incrementAndGet();
      }
      try {
        return ClientCalls.blockingUnaryCall(channel, method, CallOptions.DEFAULT.withDeadline(deadline), req);
      } catch (StatusRuntimeException e) {
        Duration wait = n + 1 < maxAttempts ? Retry.after(method, e, n, ThreadLocalRandom.current().nextDouble()) : null;
        if (wait == null || deadline.timeRemaining(TimeUnit.NANOSECONDS) < wait.toNanos()) {
          throw new PelotonException(e);
        }
        try {
          TimeUnit.NANOSECONDS.sleep(wait.toNanos());
        } catch (InterruptedException stop) {
          Thread.currentThread().interrupt();
          throw new PelotonException(e);
        }
      }
    }
  }

  // --- jobs ---

  /** Creates a job from a YAML or JSON spec file. */
  public Job createJob(Path specFile) throws IOException {
    return createJob(Specs.loadJobSpec(specFile));
  }

  /** Creates a job; its tasks are created asynchronously. */
  public Job createJob(JobSpec spec) {
    return call(JobServiceGrpc.getCreateJobMethod(), CreateJobRequest.newBuilder().setSpec(spec).build()).getJob();
  }

  public Job getJob(String id) {
    return call(JobServiceGrpc.getGetJobMethod(), GetJobRequest.newBuilder().setId(id).build()).getJob();
  }

  /** Jobs in any of states (empty: all) and in pool (empty: any). */
  /** Every job, optionally only those in states or pool, following the server's pages to the end. */
  public List<Job> listJobs(Collection<JobState> states, String pool) {
    return listJobs(states, pool, 0);
  }

  /** As {@link #listJobs(Collection, String)}, pageSize jobs per call (0: the server's default). */
  public List<Job> listJobs(Collection<JobState> states, String pool, int pageSize) {
    List<Job> out = new ArrayList<>();
    String token = "";
    do {
      ListJobsRequest req =
          ListJobsRequest.newBuilder()
              .addAllStates(states)
              .setPool(Objects.requireNonNullElse(pool, ""))
              .setLimit(pageSize)
              .setPageToken(token)
              .build();
      ListJobsResponse resp = call(JobServiceGrpc.getListJobsMethod(), req);
      out.addAll(resp.getJobsList());
      token = resp.getNextPageToken();
    } while (!token.isEmpty());
    return out;
  }

  public Job stopJob(String id) {
    return call(JobServiceGrpc.getStopJobMethod(), StopJobRequest.newBuilder().setId(id).build()).getJob();
  }

  /** Stops a periodic job's ticks from launching runs. */
  public Job suspendJob(String id) {
    return call(JobServiceGrpc.getSuspendJobMethod(), SuspendJobRequest.newBuilder().setId(id).build()).getJob();
  }

  /** Lets a suspended periodic job launch runs again from its next tick. */
  public Job resumeJob(String id) {
    return call(JobServiceGrpc.getResumeJobMethod(), ResumeJobRequest.newBuilder().setId(id).build()).getJob();
  }

  /** Launches a run of a periodic job now and returns the run. */
  public Job runJob(String id) {
    return call(JobServiceGrpc.getRunJobMethod(), RunJobRequest.newBuilder().setId(id).build()).getRun();
  }

  /** The job's current spec. */
  public JobSpec jobConfig(String id) {
    return call(JobServiceGrpc.getGetJobConfigMethod(), GetJobConfigRequest.newBuilder().setJobId(id).build()).getSpec();
  }

  /** Rolls the job onto spec, batchSize instances at a time (0: all at once). */
  public Update updateJob(String id, JobSpec spec, int batchSize) {
    UpdateJobRequest.Builder b = UpdateJobRequest.newBuilder().setJobId(id).setSpec(spec);
    if (batchSize > 0) {
      b.setBatchSize(batchSize);
    }
    return call(JobServiceGrpc.getUpdateJobMethod(), b.build()).getUpdate();
  }

  /**
   * Sets the job's number of instances: an update of its current spec with
   * only the count changed. New instances start; the highest-numbered ones
   * stop, under the job's SLA.
   */
  public Update scaleJob(String id, int instances) {
    JobSpec spec = jobConfig(id).toBuilder().setInstances(instances).build();
    return updateJob(id, spec, 0);
  }

  /**
   * Waits until the job ends and returns it. callback gets the job first and
   * then on every change of its state or of its count of tasks per state.
   */
  public Job waitJob(String id, Duration timeout, Consumer<Job> callback) throws InterruptedException {
    return waitJob(id, timeout, callback, j -> TERMINAL.contains(j.getStatus().getState()));
  }

  /** Waits until done(job) holds; throws PelotonException(DEADLINE_EXCEEDED) after timeout. */
  public Job waitJob(String id, Duration timeout, Consumer<Job> callback, Predicate<Job> done) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    Object last = null;
    while (true) {
      Job job = getJob(id);
      Object seen = List.of(job.getStatus().getState(), job.getStatus().getTaskStatesMap());
      if (callback != null && !seen.equals(last)) {
        callback.accept(job);
      }
      last = seen;
      if (done.test(job)) {
        return job;
      }
      if (System.nanoTime() > deadline) {
        throw new PelotonException(Status.DEADLINE_EXCEEDED
            .withDescription("job " + id + " still " + job.getStatus().getState() + " after " + timeout)
            .asRuntimeException());
      }
      Thread.sleep(250);
    }
  }

  // --- tasks ---

  public List<Task> listTasks(String jobId) {
    return call(TaskServiceGrpc.getListTasksMethod(), ListTasksRequest.newBuilder().setJobId(jobId).build()).getTasksList();
  }

  /** The current run's stdout. */
  public String taskLogs(String jobId, int instance) {
    GetTaskLogsRequest req = GetTaskLogsRequest.newBuilder().setJobId(jobId).setInstance(instance).build();
    return call(TaskServiceGrpc.getGetTaskLogsMethod(), req).getData().toStringUtf8();
  }

  // --- pools ---

  public Pool createPool(PoolSpec spec) {
    return call(PoolServiceGrpc.getCreatePoolMethod(), CreatePoolRequest.newBuilder().setSpec(spec).build()).getPool();
  }

  public Pool getPool(String path) {
    return call(PoolServiceGrpc.getGetPoolMethod(), GetPoolRequest.newBuilder().setPath(path).build()).getPool();
  }

  // --- events ---

  /**
   * A live stream of events of one job (jobId empty: of all), after afterSeq.
   * Iterate it; close it to stop.
   */
  public EventStream events(String jobId, long afterSeq) {
    Context.CancellableContext ctx = Context.current().withCancellation();
    WatchRequest req = WatchRequest.newBuilder().setJobId(jobId).setAfterSeq(afterSeq).build();
    Context prev = ctx.attach();
    try {
      return new EventStream(ctx, events.watch(req));
    } finally {
      ctx.detach(prev);
    }
  }

  /** Events as they happen; close() ends the stream, after which hasNext() is false. */
  public static final class EventStream implements Iterator<Event>, AutoCloseable {
    private final Context.CancellableContext ctx;
    private final Iterator<Event> it;

    EventStream(Context.CancellableContext ctx, Iterator<Event> it) {
      this.ctx = ctx;
      this.it = it;
    }

    @Override
    public boolean hasNext() {
      try {
        return it.hasNext();
      } catch (StatusRuntimeException e) {
        if (e.getStatus().getCode() == Status.Code.CANCELLED) {
          return false;
        }
        throw new PelotonException(e);
      }
    }

    @Override
    public Event next() {
      if (!hasNext()) {
        throw new NoSuchElementException();
      }
      return it.next();
    }

    @Override
    public void close() {
      ctx.cancel(null);
    }
  }

  @Override
  public void close() throws InterruptedException {
    channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
  }
}
