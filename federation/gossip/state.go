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

// CollectStates asks the members of the given regions (all regions when
// none are given) for their state and returns one blob per region: the
// shard leader's if it answered, else the one with the highest LTime,
// ties broken by node name. It returns when every live member that the
// filter selects has answered, or after timeout (zero means serf's
// default, GossipInterval × 16 × ceil(log10(N+1))). If ctx ends first it
// returns what it has with ctx's error.
func (m *Membership) CollectStates(ctx context.Context, timeout time.Duration, regions ...string) (map[string]RegionBlob, error) {
	if m.isClosed() {
		return nil, ErrClosed
	}
	params := &serf.QueryParam{Timeout: timeout}
	if len(regions) > 0 {
		params.FilterTags = map[string]string{TagRegion: exactAlternation(regions)}
	}
	expected := make(map[string]bool)
	wanted := make(map[string]bool, len(regions))
	for _, r := range regions {
		wanted[r] = true
	}
	for _, mem := range m.Members() {
		if mem.Status == StatusAlive && (len(regions) == 0 || wanted[mem.Region]) {
			expected[mem.Name] = true
		}
	}
	request := encodeStateRequest(uint64(m.stateClock.Time()))
	resp, err := m.serf.Query(StateQueryName, request, params)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrQuery, err)
	}
	defer resp.Close()

	var blobs []RegionBlob
	for len(expected) > 0 {
		select {
		case <-ctx.Done():
			return pickRegionBlobs(blobs), ctx.Err()
		case r, ok := <-resp.ResponseCh():
			if !ok {
				return pickRegionBlobs(blobs), nil
			}
			delete(expected, r.From)
			reply, err := decodeStateReply(r.Payload)
			if err != nil {
				m.logger.Debug("gossip state reply dropped", "from", r.From, "err", err)
				continue
			}
			m.stateClock.Witness(serf.LamportTime(reply.LTime))
			if !reply.hasState {
				continue
			}
			blobs = append(blobs, RegionBlob{
				Region: reply.Region, Node: r.From, Leader: reply.Leader,
				LTime: reply.LTime, Blob: reply.Blob,
			})
		}
	}
	return pickRegionBlobs(blobs), nil
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
	}
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
