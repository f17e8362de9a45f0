package io.github.pelotonfederated.client;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.time.Duration;
import java.util.Optional;

/** An error returned by the API, with its gRPC status code and the server's message. */
public class PelotonException extends RuntimeException {
  private final Status.Code code;

  public PelotonException(StatusRuntimeException e) {
    super(e.getStatus().getCode() + ": " + e.getStatus().getDescription(), e);
    this.code = e.getStatus().getCode();
  }

  public Status.Code code() {
    return code;
  }

  /** The server's hint of when to send the call again, when it refused the call for load. */
  public Optional<Duration> retryDelay() {
    return Optional.ofNullable(Retry.hint(getCause()));
  }

  /** The server's message, such as "task.resources.cpu: must be > 0". */
  public String details() {
    Status s = ((StatusRuntimeException) getCause()).getStatus();
    return s.getDescription() == null ? "" : s.getDescription();
  }
}
