package io.github.pelotonfederated.client;

import com.google.protobuf.Any;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.rpc.RetryInfo;
import io.grpc.MethodDescriptor;
import io.grpc.StatusRuntimeException;
import io.grpc.protobuf.StatusProto;
import java.time.Duration;

/**
 * Retries of unary calls the server refused for a while, by the CLI's rules
 * (cmd/peloton/cli/retry.go):
 *
 * <ul>
 *   <li>RESOURCE_EXHAUSTED with a {@code google.rpc.RetryInfo} is a call the server shed for load
 *       before any of it ran: any call, a create too, is sent again, no sooner than the hint says.
 *       RESOURCE_EXHAUSTED without a hint (a request over a size limit) is final.
 *   <li>UNAVAILABLE is retried only for reads (RPCs marked NO_SIDE_EFFECTS, which the generated
 *       method descriptors mark safe): a write that found the server unavailable may have been
 *       done.
 *   <li>The wait doubles from 200 ms to at most 5 s within ±20 % jitter, so that callers refused
 *       together do not come back together; with a hint it is at least the hint (spread up to 20 %
 *       above it; a hint over 30 s counts as 30 s).
 * </ul>
 */
final class Retry {
  static final Duration FIRST_BACKOFF = Duration.ofMillis(200);
  static final Duration MAX_BACKOFF = Duration.ofSeconds(5);
  static final double JITTER = 0.2;
  static final Duration MAX_HINT = Duration.ofSeconds(30);
  static final int DEFAULT_MAX_ATTEMPTS = 6;

  private Retry() {}

  /** The RetryInfo delay of a failed call, or null when it has none. */
  static Duration hint(Throwable t) {
    com.google.rpc.Status st = StatusProto.fromThrowable(t);
    if (st == null) {
      return null;
    }
    for (Any detail : st.getDetailsList()) {
      if (detail.is(RetryInfo.class)) {
        try {
          RetryInfo info = detail.unpack(RetryInfo.class);
          if (info.hasRetryDelay()) {
            return Duration.ofSeconds(info.getRetryDelay().getSeconds(), info.getRetryDelay().getNanos());
          }
        } catch (InvalidProtocolBufferException e) {
          return null;
        }
      }
    }
    return null;
  }

  /**
   * How long to wait before sending the failed call again as retry n (0 first), u uniform in [0,
   * 1); null when it is not to be sent again.
   */
  static Duration after(MethodDescriptor<?, ?> method, StatusRuntimeException e, int n, double u) {
    switch (e.getStatus().getCode()) {
      case RESOURCE_EXHAUSTED:
        Duration hint = hint(e);
        return hint == null ? null : backoff(n, hint, u);
      case UNAVAILABLE:
        return method.isSafe() ? backoff(n, null, u) : null;
      default:
        return null;
    }
  }

  /**
   * The wait before retry n (0 first) given the server's hint (null: none) and u uniform in [0,
   * 1): the doubling backoff within ±JITTER, and never less than the hint (capped at MAX_HINT).
   */
  static Duration backoff(int n, Duration hint, double u) {
    double d = Math.min(FIRST_BACKOFF.toNanos() * Math.pow(2, n), MAX_BACKOFF.toNanos()) * (1 + JITTER * (2 * u - 1));
    if (hint != null && !hint.isNegative() && !hint.isZero()) {
      double h = (hint.compareTo(MAX_HINT) > 0 ? MAX_HINT : hint).toNanos();
      d = Math.max(d, h * (1 + JITTER * u));
    }
    return Duration.ofNanos(Math.round(d));
  }
}
