package cli

import (
	"context"
	"math/rand/v2"
	"time"

	"github.com/peloton-federated/peloton/gateway"
	"github.com/peloton-federated/peloton/gateway/auth"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Retries of a call the server refused for a while.
const (
	maxRetries     = 5
	firstBackoff   = 200 * time.Millisecond
	maxBackoff     = 5 * time.Second
	backoffJitter  = 0.2
	retryHintLimit = 30 * time.Second
)

// retryable reports whether a failed call may be sent again: a call the
// server shed for load (ResourceExhausted with a retry hint: nothing of
// it ran), or a read that found the server unavailable. A write that
// found it unavailable is not sent twice: it may have been done.
func retryable(method string, err error) (hint time.Duration, ok bool) {
	st, isStatus := status.FromError(err)
	if !isStatus {
		return 0, false
	}
	switch st.Code() {
	case codes.ResourceExhausted:
		return gateway.RetryDelay(err)
	case codes.Unavailable:
		rule, known := auth.Rules[method]
		return 0, known && rule.Action == auth.ActRead
	}
	return 0, false
}

// retryBackoff is how long to wait before retry n (0 first): the server's
// hint when it gave one, else a doubling backoff, with jitter so that
// clients refused together do not come back together.
func retryBackoff(n int, hint time.Duration, jitter float64) time.Duration {
	d := min(firstBackoff<<n, maxBackoff)
	if hint > 0 {
		d = min(hint, retryHintLimit)
	}
	return time.Duration(float64(d) * (1 + backoffJitter*(2*jitter-1)))
}

// retryInterceptor retries unary calls as retryable allows, up to
// maxRetries times within the call's deadline.
func (a *app) retryInterceptor(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	for n := 0; ; n++ {
		err := invoker(ctx, method, req, reply, cc, opts...)
		hint, ok := retryable(method, err)
		if err == nil || !ok || n == maxRetries {
			return err
		}
		wait := retryBackoff(n, hint, rand.Float64())
		if dl, has := ctx.Deadline(); has && time.Until(dl) < wait {
			return err
		}
		if a.sleep(ctx, wait) != nil {
			return err
		}
	}
}
