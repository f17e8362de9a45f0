package gossip

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/hashicorp/serf/serf"
)

// StateQueryName is the serf query every member answers with its state.
const StateQueryName = "peloton-state"

const stateWireVersion = 1

const (
	stateFlagHasState = 1 << iota
	stateFlagLeader
)

var errBadStateWire = errors.New("gossip: malformed state message")

// RegionBlob is the state one member published for its region. LTime is
// the member's state Lamport time when it called SetState: every
// collection carries the collector's time and every reply is witnessed,
// so a blob set after its author saw another blob has a larger LTime.
type RegionBlob struct {
	Region string
	Node   string
	Leader bool
	LTime  uint64
	Blob   []byte
}

// SetState replaces the blob this member returns to state queries. The
// blob is opaque here (the shell puts JSON of capacity, allocation and
// pool demand in it) and must not exceed MaxStateBytes; larger state
// belongs behind the member's API address.
func (m *Membership) SetState(blob []byte) error {
	if len(blob) > MaxStateBytes {
		return fmt.Errorf("%w: %d bytes, limit %d", ErrStateTooLarge, len(blob), MaxStateBytes)
	}
	m.stateMu.Lock()
	defer m.stateMu.Unlock()
	m.state = append([]byte(nil), blob...)
	m.hasState = true
	m.stateLTime = uint64(m.stateClock.Increment())
	return nil
}

// stateQueryAttempts is how many times CollectStates asks members that
// have not answered. A query spreads by gossip with a bounded number of
// retransmissions, so in a small pool a member can miss it; asking again
// (only the silent members) makes a miss unlikely.
const stateQueryAttempts = 3

// CollectStates asks the members of the given regions (all regions when
// none are given) for their state and returns one blob per region: the
// shard leader's if it answered, else the one with the highest LTime,
// ties broken by node name. It returns when every live member that the
// filter selects has answered, or after timeout (zero means serf's
// default, GossipInterval × 16 × ceil(log10(N+1))); within the timeout it
// asks silent members again up to stateQueryAttempts times in all. If
// ctx ends first it returns what it has with ctx's error.
func (m *Membership) CollectStates(ctx context.Context, timeout time.Duration, regions ...string) (map[string]RegionBlob, error) {
	if m.isClosed() {
		return nil, ErrClosed
	}
	if timeout <= 0 {
		timeout = m.serf.DefaultQueryTimeout()
	}
	deadline := time.Now().Add(timeout)
	wanted := make(map[string]bool, len(regions))
	for _, r := range regions {
		wanted[r] = true
	}
	expected := make(map[string]bool)
	for _, mem := range m.Members() {
		if mem.Status == StatusAlive && (len(regions) == 0 || wanted[mem.Region]) {
			expected[mem.Name] = true
		}
	}
	byNode := make(map[string]RegionBlob)
	for attempt := 0; attempt < stateQueryAttempts && len(expected) > 0; attempt++ {
		remaining := time.Until(deadline)
		if remaining <= 0 {
			break
		}
		params := &serf.QueryParam{Timeout: remaining / time.Duration(stateQueryAttempts-attempt)}
		if len(regions) > 0 {
			params.FilterTags = map[string]string{TagRegion: exactAlternation(regions)}
		}
		if attempt > 0 {
			params.FilterNodes = sortedNames(expected)
		}
		if err := m.queryStates(ctx, params, expected, byNode); err != nil {
			return pickRegionBlobs(nodeBlobs(byNode)), err
		}
	}
	return pickRegionBlobs(nodeBlobs(byNode)), nil
}

// queryStates sends one state query and records replies in byNode,
// removing each replier from expected, until all expected members have
// replied, the query times out, or ctx ends.
func (m *Membership) queryStates(ctx context.Context, params *serf.QueryParam, expected map[string]bool, byNode map[string]RegionBlob) error {
	request := encodeStateRequest(uint64(m.stateClock.Time()))
	resp, err := m.serf.Query(StateQueryName, request, params)
	if err != nil && len(params.FilterNodes) > 0 {
		// Too many names for serf's query size limit: ask everyone.
		params.FilterNodes = nil
		resp, err = m.serf.Query(StateQueryName, request, params)
	}
	if err != nil {
		return fmt.Errorf("%w: %v", ErrQuery, err)
	}
	defer resp.Close()
	for len(expected) > 0 {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case r, ok := <-resp.ResponseCh():
			if !ok {
				return nil
			}
			delete(expected, r.From)
			reply, err := decodeStateReply(r.Payload)
			if err != nil {
				m.logger.Debug("gossip state reply dropped", "from", r.From, "err", err)
				continue
			}
			m.stateClock.Witness(serf.LamportTime(reply.LTime))
			if reply.hasState {
				byNode[r.From] = RegionBlob{
					Region: reply.Region, Node: r.From, Leader: reply.Leader,
					LTime: reply.LTime, Blob: reply.Blob,
				}
			}
		}
	}
	return nil
}

func sortedNames(set map[string]bool) []string {
	names := make([]string, 0, len(set))
	for n := range set {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func nodeBlobs(byNode map[string]RegionBlob) []RegionBlob {
	out := make([]RegionBlob, 0, len(byNode))
	for _, b := range byNode {
		out = append(out, b)
	}
	return out
}

// answerQuery replies to a state query with this member's state; other
// queries are not ours and go unanswered.
func (m *Membership) answerQuery(q *serf.Query) {
	if q.Name != StateQueryName {
		return
	}
	if ltime, err := decodeStateRequest(q.Payload); err == nil {
		m.stateClock.Witness(serf.LamportTime(ltime))
	}
	m.stateMu.Lock()
	reply := stateReply{
		hasState: m.hasState,
		Leader:   m.leader.Load(),
		LTime:    m.stateLTime,
		Region:   m.cfg.Region,
		Blob:     m.state,
	}
	if !m.hasState {
		reply.LTime = uint64(m.stateClock.Time())
	}
	buf := encodeStateReply(reply)
	m.stateMu.Unlock()
	if err := q.Respond(buf); err != nil {
		m.logger.Debug("gossip state reply not sent", "to", q.SourceNode(), "err", err)
		return
	}
	m.logger.Debug("gossip state reply sent", "to", q.SourceNode(), "ltime", q.LTime)
}

// stateReply is the wire form of one member's answer.
type stateReply struct {
	hasState bool
	Leader   bool
	LTime    uint64
	Region   string
	Blob     []byte
}

// encodeStateRequest: version byte, uvarint Lamport time of the collector.
func encodeStateRequest(ltime uint64) []byte {
	buf := []byte{stateWireVersion}
	return binary.AppendUvarint(buf, ltime)
}

func decodeStateRequest(buf []byte) (uint64, error) {
	if len(buf) < 2 || buf[0] != stateWireVersion {
		return 0, errBadStateWire
	}
	ltime, n := binary.Uvarint(buf[1:])
	if n <= 0 || 1+n != len(buf) {
		return 0, errBadStateWire
	}
	return ltime, nil
}

// encodeStateReply: version byte, flags byte, uvarint LTime, uvarint
// region length, region, blob (the rest).
func encodeStateReply(r stateReply) []byte {
	var flags byte
	if r.hasState {
		flags |= stateFlagHasState
	}
	if r.Leader {
		flags |= stateFlagLeader
	}
	buf := make([]byte, 0, 2+2*binary.MaxVarintLen64+len(r.Region)+len(r.Blob))
	buf = append(buf, stateWireVersion, flags)
	buf = binary.AppendUvarint(buf, r.LTime)
	buf = binary.AppendUvarint(buf, uint64(len(r.Region)))
	buf = append(buf, r.Region...)
	return append(buf, r.Blob...)
}

func decodeStateReply(buf []byte) (stateReply, error) {
	if len(buf) < 2 || buf[0] != stateWireVersion {
		return stateReply{}, errBadStateWire
	}
	flags := buf[1]
	if flags&^(stateFlagHasState|stateFlagLeader) != 0 {
		return stateReply{}, errBadStateWire
	}
	rest := buf[2:]
	ltime, n := binary.Uvarint(rest)
	if n <= 0 {
		return stateReply{}, errBadStateWire
	}
	rest = rest[n:]
	regionLen, n := binary.Uvarint(rest)
	if n <= 0 || regionLen > uint64(len(rest)-n) {
		return stateReply{}, errBadStateWire
	}
	rest = rest[n:]
	r := stateReply{
		hasState: flags&stateFlagHasState != 0,
		Leader:   flags&stateFlagLeader != 0,
		LTime:    ltime,
		Region:   string(rest[:regionLen]),
	}
	if blob := rest[regionLen:]; len(blob) > 0 {
		r.Blob = append([]byte(nil), blob...)
	}
	if !r.hasState && len(r.Blob) > 0 {
		return stateReply{}, errBadStateWire
	}
	return r, nil
}

// pickRegionBlobs keeps one blob per region: a leader's over a
// follower's, then the higher LTime, then the smaller node name.
func pickRegionBlobs(blobs []RegionBlob) map[string]RegionBlob {
	out := make(map[string]RegionBlob)
	for _, b := range blobs {
		cur, ok := out[b.Region]
		if !ok || betterBlob(b, cur) {
			out[b.Region] = b
		}
	}
	return out
}

func betterBlob(a, b RegionBlob) bool {
	if a.Leader != b.Leader {
		return a.Leader
	}
	if a.LTime != b.LTime {
		return a.LTime > b.LTime
	}
	return a.Node < b.Node
}

// exactAlternation is a regular expression matching exactly the given
// values, for serf's tag filters.
func exactAlternation(values []string) string {
	quoted := make([]string, len(values))
	for i, v := range values {
		quoted[i] = regexp.QuoteMeta(v)
	}
	sort.Strings(quoted)
	return "^(?:" + strings.Join(quoted, "|") + ")$"
}
