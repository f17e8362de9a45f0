package gossip

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"

	"github.com/hashicorp/serf/serf"
)

// Keyring rotation goes through serf's KeyManager, which sends an internal
// query to every member and waits for all answers. Rotate in three steps,
// each finished on every member before the next: InstallKey(new),
// UseKey(new), RemoveKey(old). A member that misses a step keeps talking
// as long as it holds a key the others can read.
//
// Each step is idempotent on a member, so a step some member did not
// answer in time (its answer is a UDP message, and a query waits a few
// gossip intervals) is sent again, up to keyringAttempts times; a member
// that answered with an error is not asked again. Answers are relayed
// through keyringRelayFactor other members as well.
const (
	keyringAttempts    = 3
	keyringRelayFactor = 2
)

// KeyringStatus is what ListKeys gathered. Keys are named by KeyID, never
// by their bytes.
type KeyringStatus struct {
	// Members is how many live members serf knew of; Responses how many
	// answered.
	Members   int
	Responses int
	// Installed counts, per key, the members that hold it.
	Installed map[string]int
	// Primary counts, per key, the members that encrypt with it.
	Primary map[string]int
}

// KeyID names a key without revealing it: the first 12 hex digits of its
// SHA-256. Safe to log.
func KeyID(key []byte) string {
	sum := sha256.Sum256(key)
	return hex.EncodeToString(sum[:6])
}

// InstallKey adds key to every member's keyring; they can then read
// messages encrypted with it.
func (m *Membership) InstallKey(ctx context.Context, key []byte) error {
	return m.keyOp(ctx, "install", key, (*serf.KeyManager).InstallKeyWithOptions)
}

// UseKey makes key, already installed everywhere, the one every member
// encrypts with.
func (m *Membership) UseKey(ctx context.Context, key []byte) error {
	return m.keyOp(ctx, "use", key, (*serf.KeyManager).UseKeyWithOptions)
}

// RemoveKey drops key from every member's keyring. Serf refuses to remove
// a member's primary key.
func (m *Membership) RemoveKey(ctx context.Context, key []byte) error {
	return m.keyOp(ctx, "remove", key, (*serf.KeyManager).RemoveKeyWithOptions)
}

// ListKeys asks every member which keys it holds.
func (m *Membership) ListKeys(ctx context.Context) (KeyringStatus, error) {
	if err := m.keyringUsable(); err != nil {
		return KeyringStatus{}, err
	}
	var resp *serf.KeyResponse
	err := runWithContext(ctx, func() error {
		var err error
		resp, err = m.serf.KeyManager().ListKeysWithOptions(&serf.KeyRequestOptions{RelayFactor: keyringRelayFactor})
		return err
	})
	if resp == nil {
		return KeyringStatus{}, fmt.Errorf("%w: list: %w", ErrKeyring, err)
	}
	status := KeyringStatus{
		Members:   resp.NumNodes,
		Responses: resp.NumResp,
		Installed: renameKeys(resp.Keys),
		Primary:   renameKeys(resp.PrimaryKeys),
	}
	if err != nil {
		return status, fmt.Errorf("%w: list: %v%s", ErrKeyring, err, nodeMessages(resp))
	}
	return status, nil
}

func (m *Membership) keyOp(ctx context.Context, op string, key []byte,
	call func(*serf.KeyManager, string, *serf.KeyRequestOptions) (*serf.KeyResponse, error)) error {
	if err := m.keyringUsable(); err != nil {
		return err
	}
	switch len(key) {
	case 16, 24, 32:
	default:
		return fmt.Errorf("%w: got %d bytes", ErrBadKey, len(key))
	}
	var resp *serf.KeyResponse
	var err error
	for attempt := 1; ; attempt++ {
		err = runWithContext(ctx, func() error {
			var err error
			resp, err = call(m.serf.KeyManager(), base64.StdEncoding.EncodeToString(key), &serf.KeyRequestOptions{RelayFactor: keyringRelayFactor})
			return err
		})
		unanswered := err != nil && resp != nil && resp.NumErr == 0 && resp.NumResp < resp.NumNodes
		if !unanswered || attempt == keyringAttempts || ctx.Err() != nil {
			break
		}
		m.logger.Warn("gossip keyring: members did not answer; asking again", "op", op, "key", KeyID(key),
			"answered", resp.NumResp, "members", resp.NumNodes, "attempt", attempt)
	}
	if err != nil {
		return fmt.Errorf("%w: %s key %s: %v%s", ErrKeyring, op, KeyID(key), err, nodeMessages(resp))
	}
	m.logger.Info("gossip keyring changed", "op", op, "key", KeyID(key), "members", resp.NumResp)
	return nil
}

func (m *Membership) keyringUsable() error {
	if m.isClosed() {
		return ErrClosed
	}
	if !m.serf.EncryptionEnabled() {
		return fmt.Errorf("%w: gossip is not encrypted (no EncryptKey)", ErrKeyring)
	}
	return nil
}

// renameKeys turns serf's base64 key names into KeyIDs.
func renameKeys(counts map[string]int) map[string]int {
	out := make(map[string]int, len(counts))
	for encoded, n := range counts {
		raw, err := base64.StdEncoding.DecodeString(encoded)
		if err != nil {
			continue
		}
		out[KeyID(raw)] += n
	}
	return out
}

// nodeMessages lists the per-member messages serf collected, sorted.
func nodeMessages(resp *serf.KeyResponse) string {
	if resp == nil || len(resp.Messages) == 0 {
		return ""
	}
	lines := make([]string, 0, len(resp.Messages))
	for node, msg := range resp.Messages {
		lines = append(lines, node+": "+msg)
	}
	sort.Strings(lines)
	return " (" + strings.Join(lines, "; ") + ")"
}
