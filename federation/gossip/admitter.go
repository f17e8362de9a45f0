package gossip

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/hashicorp/serf/serf"
)

// Verification bounds: a verification gives up after admitVerifyTimeout;
// a message about an unverified member waits at most admitWait for it
// (memberlist holds its node lock meanwhile) before the member is refused
// for now, to be admitted by a later message once verified.
const (
	admitVerifyTimeout = 3 * time.Second
	admitWait          = 500 * time.Millisecond
)

// ErrNotAdmitted: a member's identity is not (or not yet) verified.
var ErrNotAdmitted = errors.New("gossip: member not admitted")

// admitter is serf's merge delegate when Config.Admission is set. Serf
// calls it with one member for every alive message about a member (under
// memberlist's node lock) and with the whole remote state when a join
// merges two pools. Only the first admits: a join's list may name members
// that are dead (their API silent), and every alive member in it is
// admitted one by one as the merge applies it.
type admitter struct {
	adm   Admission
	local string
	log   *slog.Logger
	now   func() time.Time

	ctx    context.Context // ends when the membership closes
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu       sync.Mutex
	book     *admitBook
	inflight map[string]chan struct{}
	asked    int
}

var _ serf.MergeDelegate = (*admitter)(nil)

func newAdmitter(adm Admission, local string, log *slog.Logger, now func() time.Time) *admitter {
	ctx, cancel := context.WithCancel(context.Background())
	return &admitter{adm: adm, local: local, log: log, now: now, ctx: ctx, cancel: cancel,
		book: newAdmitBook(), inflight: map[string]chan struct{}{}}
}

// stop cancels running verifications and waits for them.
func (a *admitter) stop() {
	a.cancel()
	a.wg.Wait()
}

func (a *admitter) NotifyMerge(members []*serf.Member) error {
	if len(members) != 1 {
		return nil
	}
	m := members[0]
	if m.Name == a.local {
		return nil
	}
	return a.admit(Claim{
		Name: m.Name, Region: m.Tags[TagRegion], APIAddr: m.Tags[TagAPIAddr],
		Addr: net.JoinHostPort(m.Addr.String(), strconv.Itoa(int(m.Port))),
	}, m.Tags[TagProof])
}

// admit answers from the book, starting a verification when none ran and
// waiting a little for it.
func (a *admitter) admit(c Claim, proof string) error {
	key := c.key(proof)
	a.mu.Lock()
	ok, start := a.book.decide(key, a.now())
	if a.asked++; a.asked%256 == 0 {
		a.book.forget(a.now())
	}
	done := a.inflight[key]
	if start {
		done = make(chan struct{})
		a.inflight[key] = done
		a.wg.Add(1)
		go a.verify(c, proof, key, done)
	}
	a.mu.Unlock()
	if ok {
		return nil
	}
	if done != nil {
		t := time.NewTimer(admitWait)
		select {
		case <-done:
		case <-t.C:
		case <-a.ctx.Done():
		}
		t.Stop()
		a.mu.Lock()
		ok, _ = a.book.decide(key, a.now())
		a.mu.Unlock()
		if ok {
			return nil
		}
	}
	return fmt.Errorf("%w: %s (region %s, api %s)", ErrNotAdmitted, c.Name, c.Region, c.APIAddr)
}

func (a *admitter) verify(c Claim, proof, key string, done chan struct{}) {
	defer a.wg.Done()
	defer close(done)
	ctx, cancel := context.WithTimeout(a.ctx, admitVerifyTimeout)
	defer cancel()
	var reason string
	switch {
	case proof == "":
		reason = "no proof of identity in its tags"
	default:
		if err := a.adm.Verify(ctx, c, proof); err != nil {
			reason = err.Error()
		}
	}
	if a.ctx.Err() != nil {
		return // closing: record nothing
	}
	a.mu.Lock()
	first := a.book.record(key, reason, a.now())
	delete(a.inflight, key)
	a.mu.Unlock()
	switch {
	case reason == "" && first:
		a.log.Info("gossip member verified", "member", c.Name, "member_region", c.Region, "api", c.APIAddr)
	case reason != "" && first:
		a.log.Warn("gossip member refused: its identity is not verified", "member", c.Name, "member_region", c.Region,
			"api", c.APIAddr, "gossip_addr", c.Addr, "reason", reason)
	case reason != "":
		a.log.Debug("gossip member still refused", "member", c.Name, "reason", reason)
	}
}
