package io.github.pelotonfederated.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.Status;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import peloton.v1.Types.Event;
import peloton.v1.Types.Job;
import peloton.v1.Types.JobSpec;
import peloton.v1.Types.JobState;
import peloton.v1.Types.JobType;
import peloton.v1.Types.Task;
import peloton.v1.Types.TaskState;

/** The client against a running `peloton dev` whose local hosts run real processes. */
class PelotonClientTest {
  static final Path REPO = Path.of("..", "..").toAbsolutePath().normalize();
  static DevCluster dev;
  static PelotonClient client;

  @BeforeAll
  static void start() throws Exception {
    dev = new DevCluster();
    client = new PelotonClient(dev.addr);
  }

  @AfterAll
  static void stop() throws Exception {
    if (client != null) {
      client.close();
    }
    if (dev != null) {
      dev.close();
    }
  }

  static JobSpec batch(String name, String command, int instances) throws Exception {
    return Specs.jobSpec("{name: " + name + ", type: batch, instances: " + instances
        + ", task: {command: sh, args: ['-c', '" + command + "'], resources: {cpu: 0.1, memMb: 16}}}");
  }

  @Test
  void specShortForms() throws Exception {
    JobSpec s = Specs.loadJobSpec(REPO.resolve("examples/service.yaml"));
    assertEquals("web", s.getName());
    assertEquals(JobType.JOB_TYPE_SERVICE, s.getType());
    assertEquals(4, s.getInstances());
    JobSpec t = Specs.jobSpec("name: x\ntype: JOB_TYPE_DAEMON\nsla: {maxUnavailable: 2}\nmax_running: 3\n"
        + "task: {command: 'true', constraints: [{key: zone, op: not-in, values: [a]}]}");
    assertEquals(JobType.JOB_TYPE_DAEMON, t.getType());
    assertEquals("2", t.getSla().getMaxUnavailable());
    assertEquals(3, t.getMaxRunning());
    assertEquals("CONSTRAINT_OP_NOT_IN", t.getTask().getConstraints(0).getOp().name());
    assertThrows(Exception.class, () -> Specs.jobSpec("name: x\ntype: sometimes\n"));
  }

  @Test
  void createFromFileAndWaitWithCallback() throws Exception {
    Job job = client.createJob(REPO.resolve("examples/hello.yaml"));
    List<JobState> seen = new ArrayList<>();
    Job done = client.waitJob(job.getId(), Duration.ofMinutes(1), j -> seen.add(j.getStatus().getState()));
    assertEquals(JobState.JOB_STATE_SUCCEEDED, done.getStatus().getState());
    assertTrue(seen.size() >= 2, "callback on every change: " + seen);
    assertEquals(JobState.JOB_STATE_SUCCEEDED, seen.get(seen.size() - 1));
    assertTrue(client.taskLogs(job.getId(), 0).contains("Hello, world"));
  }

  @Test
  void listByStateAndPool() throws Exception {
    Job job = client.createJob(batch("java-list", "exit 0", 2));
    client.waitJob(job.getId(), Duration.ofMinutes(1), null);
    assertTrue(client.listJobs(Set.of(JobState.JOB_STATE_SUCCEEDED), "/").stream().anyMatch(j -> j.getId().equals(job.getId())));
    assertFalse(client.listJobs(Set.of(JobState.JOB_STATE_RUNNING), "").stream().anyMatch(j -> j.getId().equals(job.getId())));
    // One job per page: the client follows the pages to the end.
    client.createJob(batch("java-list-2", "exit 0", 1));
    List<String> every = client.listJobs(Set.of(), "").stream().map(Job::getId).toList();
    assertTrue(every.size() >= 2, "jobs listed: " + every);
    assertEquals(every, client.listJobs(Set.of(), "", 1).stream().map(Job::getId).toList());
    List<Task> tasks = client.listTasks(job.getId());
    assertEquals(2, tasks.size());
    assertTrue(tasks.stream().allMatch(t -> t.getState() == TaskState.TASK_STATE_SUCCEEDED));
  }

  @Test
  void eventStream() throws Exception {
    Job job = client.createJob(batch("java-events", "sleep 0.5", 2));
    List<TaskState> taskStates = new ArrayList<>();
    JobState last = null;
    try (PelotonClient.EventStream events = client.events(job.getId(), 0)) {
      while (events.hasNext()) {
        Event e = events.next();
        assertEquals(job.getId(), e.getJobId());
        if (e.hasTask()) {
          taskStates.add(e.getTask().getState());
        } else if (e.hasJob()) {
          last = e.getJob().getState();
          if (PelotonClient.TERMINAL.contains(last)) {
            break;
          }
        }
      }
    }
    assertEquals(JobState.JOB_STATE_SUCCEEDED, last);
    assertTrue(taskStates.stream().filter(s -> s == TaskState.TASK_STATE_SUCCEEDED).count() >= 2, taskStates.toString());
  }

  @Test
  void badSpecNamesTheField() throws Exception {
    JobSpec spec = batch("java-bad", "true", 1);
    JobSpec bad = spec.toBuilder().setTask(spec.getTask().toBuilder()
        .setResources(spec.getTask().getResources().toBuilder().setCpu(-1))).build();
    PelotonException e = assertThrows(PelotonException.class, () -> client.createJob(bad));
    assertEquals(Status.Code.INVALID_ARGUMENT, e.code());
    assertTrue(e.details().contains("task.resources.cpu"), e.details());
    assertEquals(Status.Code.NOT_FOUND, assertThrows(PelotonException.class, () -> client.getJob("no-such-job")).code());
  }

  @Test
  void scaleUpAndDown() throws Exception {
    JobSpec spec = Specs.jobSpec("{name: java-scale, type: service, instances: 1,"
        + " task: {command: sleep, args: ['3600'], resources: {cpu: 0.1, memMb: 16}}}");
    Job job = client.createJob(spec);
    waitRunning(job.getId(), 1);
    client.scaleJob(job.getId(), 3);
    waitRunning(job.getId(), 3);
    assertEquals(3, client.jobConfig(job.getId()).getInstances());
    client.scaleJob(job.getId(), 2);
    waitRunning(job.getId(), 2);
    client.stopJob(job.getId());
    assertEquals(JobState.JOB_STATE_KILLED, client.waitJob(job.getId(), Duration.ofMinutes(1), null).getStatus().getState());
  }

  static void waitRunning(String id, int n) throws Exception {
    long deadline = System.nanoTime() + Duration.ofMinutes(1).toNanos();
    while (true) {
      long running = client.listTasks(id).stream().filter(t -> t.getState() == TaskState.TASK_STATE_RUNNING).count();
      if (running == n) {
        return;
      }
      assertTrue(System.nanoTime() < deadline, id + ": " + running + " running, want " + n);
      Thread.sleep(200);
    }
  }
}
