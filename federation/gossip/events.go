package gossip

import (
	"net"
	"strconv"
	"time"

	"github.com/hashicorp/serf/serf"
)

// Status is a member's state as serf sees it.
type Status string

const (
	StatusAlive   Status = "alive"
	StatusLeaving Status = "leaving"
	StatusLeft    Status = "left"
	StatusFailed  Status = "failed"
	StatusUnknown Status = "unknown"
)

// Member is one member of the pool, read from its tags.
type Member struct {
	Name    string
	Region  string
	Role    string
	APIAddr string
	Leader  bool
	Status  Status
	// Suspect: alive, but this member's probe of it failed every way
	// (direct, indirect, TCP) within the longest suspicion timeout
	// (SuspicionMult × SuspicionMaxTimeoutMult × ProbeInterval): memberlist
	// may declare it failed unless it refutes. Serf reports such a member
	// alive and memberlist does not publish its suspicion, so this is read
	// from its probe reports (see Probes); a refutation is not seen, and
	// the flag stays until the timeout passes. Set by Members only.
	Suspect bool
	// Addr is the member's gossip address (host:port).
	Addr string
}

// Event is one of MemberUp, MemberDown, MemberLeft, MemberUpdated,
// MemberReaped and UserEvent. The set is closed: no other package can add
// to it, so a type switch over these six is exhaustive. Serf gives user
// events a Lamport time (UserEvent.LTime) but not member events; those
// carry Seen, this member's local time of learning, and Members is the
// authoritative current view.
type Event interface {
	isEvent()
}

// MemberUp: a member joined, or came back after failing.
type MemberUp struct {
	Member Member
	Seen   time.Time
}

// MemberDown: a member stopped answering probes and was declared failed
// after its suspicion timeout.
type MemberDown struct {
	Member Member
	Seen   time.Time
}

// MemberLeft: a member announced it was leaving.
type MemberLeft struct {
	Member Member
	Seen   time.Time
}

// MemberUpdated: a member changed its tags (e.g. its leader flag).
type MemberUpdated struct {
	Member Member
	Seen   time.Time
}

// MemberReaped: a failed or left member was forgotten after serf's
// reconnect or tombstone timeout.
type MemberReaped struct {
	Member Member
	Seen   time.Time
}

// UserEvent is a small broadcast sent with Broadcast. LTime is serf's
// Lamport time for user events: two events from the pool are ordered by it.
type UserEvent struct {
	Name    string
	Payload []byte
	LTime   uint64
	Seen    time.Time
}

func (MemberUp) isEvent()      {}
func (MemberDown) isEvent()    {}
func (MemberLeft) isEvent()    {}
func (MemberUpdated) isEvent() {}
func (MemberReaped) isEvent()  {}
func (UserEvent) isEvent()     {}

// memberFromSerf reads our tags off a serf member.
func memberFromSerf(m serf.Member) Member {
	return Member{
		Name:    m.Name,
		Region:  m.Tags[TagRegion],
		Role:    m.Tags[TagRole],
		APIAddr: m.Tags[TagAPIAddr],
		Leader:  m.Tags[TagLeader] == "1",
		Status:  statusFromSerf(m.Status),
		Addr:    net.JoinHostPort(m.Addr.String(), strconv.Itoa(int(m.Port))),
	}
}

func statusFromSerf(s serf.MemberStatus) Status {
	switch s {
	case serf.StatusAlive:
		return StatusAlive
	case serf.StatusLeaving:
		return StatusLeaving
	case serf.StatusLeft:
		return StatusLeft
	case serf.StatusFailed:
		return StatusFailed
	default:
		return StatusUnknown
	}
}

// translate turns one serf event into ours: one event per member of a
// member event. Queries are not events here; ok is false for them and for
// event types this package does not expose.
func translate(ev serf.Event, now time.Time) (out []Event, ok bool) {
	switch e := ev.(type) {
	case serf.MemberEvent:
		for _, sm := range e.Members {
			m := memberFromSerf(sm)
			switch e.Type {
			case serf.EventMemberJoin:
				out = append(out, MemberUp{Member: m, Seen: now})
			case serf.EventMemberFailed:
				out = append(out, MemberDown{Member: m, Seen: now})
			case serf.EventMemberLeave:
				out = append(out, MemberLeft{Member: m, Seen: now})
			case serf.EventMemberUpdate:
				out = append(out, MemberUpdated{Member: m, Seen: now})
			case serf.EventMemberReap:
				out = append(out, MemberReaped{Member: m, Seen: now})
			}
		}
		return out, len(out) > 0
	case serf.UserEvent:
		payload := append([]byte(nil), e.Payload...)
		return []Event{UserEvent{Name: e.Name, Payload: payload, LTime: uint64(e.LTime), Seen: now}}, true
	default:
		return nil, false
	}
}
