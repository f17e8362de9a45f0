package lease

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/peloton-federated/peloton/shard/clock"
	"github.com/peloton-federated/peloton/shard/store"
)

// ErrInvalidConfig means a Config cannot work.
var ErrInvalidConfig = errors.New("kubernetes lease store: invalid config")

const (
	// DefaultClockSkew is how much later than its holder's clock says
	// another member takes over an unrenewed lease.
	DefaultClockSkew = time.Second
	// DefaultRequestTimeout bounds each API request of a client this
	// package makes.
	DefaultRequestTimeout = 10 * time.Second
	// maxRounds is how often a call reads and decides: once, and once
	// more when its write lost a compare-and-set.
	maxRounds = 2
	// managedBy labels the Lease objects this package writes.
	managedBy = "peloton"
)

// Config says where the leases live.
type Config struct {
	// Client talks to the API server. When nil, one is made from
	// Kubeconfig.
	Client kubernetes.Interface
	// Kubeconfig is a kubeconfig file; empty means the in-cluster config
	// of a pod (its service account).
	Kubeconfig string
	// Namespace holds the Lease objects; required.
	Namespace string
	// ClockSkew is how far members' clocks may differ: a lease another
	// member holds is taken only ClockSkew after its expiry. Zero means
	// DefaultClockSkew; negative means none.
	ClockSkew time.Duration
	// Clock stamps renewals and judges expiry; the wall clock when nil.
	Clock clock.Clock
}

// Store keeps leases as coordination.k8s.io/v1 Lease objects in one
// namespace. It is safe for concurrent use.
type Store struct {
	client    kubernetes.Interface
	namespace string
	skew      time.Duration
	clk       clock.Clock
	closed    atomic.Bool
}

var _ store.LeaseStore = (*Store)(nil)

// New checks cfg and returns a Store; it does not contact the API server.
func New(cfg Config) (*Store, error) {
	if errs := validation.IsDNS1123Label(cfg.Namespace); len(errs) > 0 {
		return nil, fmt.Errorf("%w: namespace %q: %s", ErrInvalidConfig, cfg.Namespace, strings.Join(errs, "; "))
	}
	client := cfg.Client
	if client == nil {
		rc, err := RESTConfig(cfg.Kubeconfig)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrInvalidConfig, err)
		}
		if client, err = kubernetes.NewForConfig(rc); err != nil {
			return nil, fmt.Errorf("%w: client: %v", ErrInvalidConfig, err)
		}
	}
	skew := cfg.ClockSkew
	switch {
	case skew == 0:
		skew = DefaultClockSkew
	case skew < 0:
		skew = 0
	}
	clk := cfg.Clock
	if clk == nil {
		clk = clock.Real{}
	}
	return &Store{client: client, namespace: cfg.Namespace, skew: skew, clk: clk}, nil
}

// RESTConfig reads a kubeconfig file (its current context), or the
// in-cluster config when path is empty. It does not contact the server.
func RESTConfig(path string) (*rest.Config, error) {
	var rc *rest.Config
	var err error
	if path == "" {
		rc, err = rest.InClusterConfig()
		if err != nil {
			return nil, fmt.Errorf("no kubeconfig given, and no in-cluster config: %w", err)
		}
	} else {
		rc, err = clientcmd.BuildConfigFromFlags("", path)
		if err != nil {
			return nil, fmt.Errorf("kubeconfig %s: %w", path, err)
		}
	}
	rc.Timeout = DefaultRequestTimeout
	rc.QPS, rc.Burst = 50, 100
	rc.UserAgent = "peloton-lease"
	return rc, nil
}

// Close makes every later call fail with store.ErrUnavailable.
func (s *Store) Close() error {
	s.closed.Store(true)
	return nil
}

// AcquireLease takes the named lease for holder for ttl if it is free or
// ended, or renews it if holder has it (keeping its term). A new holder
// gets spec.leaseTransitions + 1 as its term. ErrConflict when another
// holder has it.
func (s *Store) AcquireLease(ctx context.Context, name, holder string, ttl time.Duration) (uint64, error) {
	if err := checkRequest(name, holder, ttl); err != nil {
		return 0, fmt.Errorf("acquire lease: %w", err)
	}
	d, err := s.apply(ctx, name, request{op: acquire, holder: holder, ttl: ttl})
	if err != nil {
		return 0, fmt.Errorf("acquire lease %s/%s: %w", s.namespace, name, err)
	}
	return d.term, nil
}

// RenewLease extends a lease held by holder at term by ttl from now;
// ErrConflict if it ended or was taken.
func (s *Store) RenewLease(ctx context.Context, name, holder string, term uint64, ttl time.Duration) error {
	if err := checkRequest(name, holder, ttl); err != nil {
		return fmt.Errorf("renew lease: %w", err)
	}
	if _, err := s.apply(ctx, name, request{op: renew, holder: holder, term: term, ttl: ttl}); err != nil {
		return fmt.Errorf("renew lease %s/%s: %w", s.namespace, name, err)
	}
	return nil
}

// ReleaseLease frees a lease held by holder at term; nothing happens when
// it is not. The Lease object stays, keeping the last term.
func (s *Store) ReleaseLease(ctx context.Context, name, holder string, term uint64) error {
	if err := checkRequest(name, holder, time.Second); err != nil {
		return fmt.Errorf("release lease: %w", err)
	}
	if _, err := s.apply(ctx, name, request{op: release, holder: holder, term: term}); err != nil {
		return fmt.Errorf("release lease %s/%s: %w", s.namespace, name, err)
	}
	return nil
}

// LeaseHolder returns the holder and term of the lease, or "" and 0 when
// it is free or ended.
func (s *Store) LeaseHolder(ctx context.Context, name string) (string, uint64, error) {
	if err := checkName(name); err != nil {
		return "", 0, fmt.Errorf("lease: %w", err)
	}
	if s.closed.Load() {
		return "", 0, fmt.Errorf("lease %s/%s: %w: closed", s.namespace, name, store.ErrUnavailable)
	}
	obj, err := s.client.CoordinationV1().Leases(s.namespace).Get(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return "", 0, nil
	case err != nil:
		return "", 0, fmt.Errorf("lease %s/%s: %w", s.namespace, name, s.classify(ctx, err))
	}
	holder, term := heldBy(fromLease(obj), s.clk.Now(), s.skew)
	return holder, term, nil
}

// apply reads the lease, decides, and writes the decision with a
// compare-and-set on the resourceVersion read (a create when there is no
// Lease object yet). A write that loses the compare-and-set reads and
// decides once more; losing again is ErrConflict.
func (s *Store) apply(ctx context.Context, name string, req request) (decision, error) {
	if req.ttl > 0 {
		// A call answered after ttl cannot hold the lease for ttl from
		// its start anyway.
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, req.ttl, errTimedOut)
		defer cancel()
	}
	leases := s.client.CoordinationV1().Leases(s.namespace)
	for range maxRounds {
		if s.closed.Load() {
			return decision{}, fmt.Errorf("%w: closed", store.ErrUnavailable)
		}
		obj, err := leases.Get(ctx, name, metav1.GetOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return decision{}, s.classify(ctx, err)
		}
		exists := err == nil
		var cur record
		if exists {
			cur = fromLease(obj)
		}
		d := decide(cur, req, s.clk.Now(), s.skew)
		if d.err != nil || !d.write {
			return d, d.err
		}
		if exists {
			_, err = leases.Update(ctx, toLease(obj, d.next), metav1.UpdateOptions{})
		} else {
			_, err = leases.Create(ctx, toLease(&coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{
				Name: name, Namespace: s.namespace, Labels: map[string]string{"app.kubernetes.io/managed-by": managedBy},
			}}, d.next), metav1.CreateOptions{})
		}
		switch {
		case err == nil:
			return d, nil
		case apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err):
			continue // changed since it was read: decide again
		case !exists && apierrors.IsNotFound(err):
			return decision{}, fmt.Errorf("namespace %s does not exist: %w", s.namespace, err)
		default:
			return decision{}, s.classify(ctx, err)
		}
	}
	return decision{}, fmt.Errorf("changed by others while deciding, %d times: %w", maxRounds, store.ErrConflict)
}

// fromLease reads the fields the decisions use. A holder without a renew
// time or duration (not written by this package) counts as ended.
func fromLease(l *coordinationv1.Lease) record {
	var r record
	if h := l.Spec.HolderIdentity; h != nil {
		r.Holder = *h
	}
	if t := l.Spec.LeaseTransitions; t != nil && *t > 0 {
		r.Term = uint64(*t)
	}
	if t := l.Spec.AcquireTime; t != nil {
		r.Acquired = t.Time
	}
	if t := l.Spec.RenewTime; t != nil {
		r.Renewed = t.Time
	}
	if d := l.Spec.LeaseDurationSeconds; d != nil && *d > 0 {
		r.Duration = time.Duration(*d) * time.Second
	}
	return r
}

// toLease is l (a copy) with its spec set from r.
func toLease(l *coordinationv1.Lease, r record) *coordinationv1.Lease {
	l = l.DeepCopy()
	transitions := int32(min(r.Term, math.MaxInt32))
	spec := coordinationv1.LeaseSpec{LeaseTransitions: &transitions}
	if r.Holder != "" {
		holder := r.Holder
		secs := int32(r.Duration / time.Second)
		acquired, renewed := metav1.NewMicroTime(r.Acquired), metav1.NewMicroTime(r.Renewed)
		spec.HolderIdentity, spec.LeaseDurationSeconds = &holder, &secs
		spec.AcquireTime, spec.RenewTime = &acquired, &renewed
	}
	l.Spec = spec
	return l
}

// maxTTL is the longest TTL spec.leaseDurationSeconds (int32) can hold.
const maxTTL = math.MaxInt32 * time.Second

// checkName accepts a lease name that is a Kubernetes object name.
func checkName(name string) error {
	if name == "" {
		return fmt.Errorf("%w: lease name is empty", store.ErrInvalid)
	}
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return fmt.Errorf("%w: lease name %q is not a Kubernetes object name: %s", store.ErrInvalid, name, strings.Join(errs, "; "))
	}
	return nil
}

func checkRequest(name, holder string, ttl time.Duration) error {
	if err := checkName(name); err != nil {
		return err
	}
	switch {
	case holder == "":
		return fmt.Errorf("%w: lease %s: holder is empty", store.ErrInvalid, name)
	case ttl <= 0 || ttl > maxTTL:
		return fmt.Errorf("%w: lease %s: ttl %v out of range", store.ErrInvalid, name, ttl)
	}
	return nil
}

// errTimedOut is the cause of a call's own deadline (its ttl).
var errTimedOut = errors.New("no answer within the lease's ttl")

// classify maps a client error to the store's sentinels: the caller's
// own cancellation stays as it is; an API server that cannot be reached
// or cannot answer now is store.ErrUnavailable; anything else (denied by
// RBAC, rejected as invalid) is returned wrapped as it is.
func (s *Store) classify(ctx context.Context, err error) error {
	cause := context.Cause(ctx)
	switch {
	case errors.Is(cause, errTimedOut):
		return fmt.Errorf("%w: %w: %w", store.ErrUnavailable, cause, err)
	case cause != nil:
		return cause
	case apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err):
		return fmt.Errorf("%w (the lease needs get, create and update on leases.coordination.k8s.io in namespace %s)", err, s.namespace)
	case unavailable(err):
		return fmt.Errorf("%w: %w", store.ErrUnavailable, err)
	}
	return err
}

// unavailable reports whether err means "the API server cannot be reached
// or cannot answer now".
func unavailable(err error) bool {
	if apierrors.IsServiceUnavailable(err) || apierrors.IsServerTimeout(err) || apierrors.IsTimeout(err) ||
		apierrors.IsTooManyRequests(err) || apierrors.IsInternalError(err) || apierrors.IsUnexpectedServerError(err) {
		return true
	}
	for _, target := range []error{io.EOF, io.ErrUnexpectedEOF, syscall.ECONNREFUSED, syscall.ECONNRESET,
		syscall.EPIPE, context.DeadlineExceeded} {
		if errors.Is(err, target) {
			return true
		}
	}
	var netErr net.Error
	return errors.As(err, &netErr)
}
