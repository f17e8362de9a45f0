package federation

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"

	"github.com/peloton-federated/peloton/federation/gossip"
)

// ErrBadProof: a gossip member's proof of identity does not verify with
// the certificate its API address presents.
var ErrBadProof = errors.New("the proof of identity does not verify with the certificate at the member's API address")

// CertAdmission admits a gossip member that holds a region certificate of
// the federation's CA for the region it claims. A member's proof is a
// signature of its claim (name, region, API and gossip addresses) by its
// region certificate's key; to verify it, this member dials the claimed
// API address with mutual TLS (its own region certificate; the peer's
// checked against the CA and the claimed region, as every call between
// regions is) and checks the signature with the key of the certificate the
// peer presented. A process with another CA's certificate fails the
// handshake; one that advertises a real member's API address cannot sign
// for its own gossip address.
type CertAdmission struct {
	// Key is this member's region certificate's private key.
	Key crypto.Signer
	// TLS is the client TLS configuration of a call to region.
	TLS func(region string) *tls.Config
}

var _ gossip.Admission = CertAdmission{}

func (a CertAdmission) Prove(c gossip.Claim) (string, error) {
	payload := c.Payload()
	var sig []byte
	var err error
	switch a.Key.Public().(type) {
	case ed25519.PublicKey:
		sig, err = a.Key.Sign(rand.Reader, payload, crypto.Hash(0))
	default:
		sum := sha256.Sum256(payload)
		sig, err = a.Key.Sign(rand.Reader, sum[:], crypto.SHA256)
	}
	if err != nil {
		return "", err
	}
	return base64.RawStdEncoding.EncodeToString(sig), nil
}

func (a CertAdmission) Verify(ctx context.Context, c gossip.Claim, proof string) error {
	sig, err := base64.RawStdEncoding.DecodeString(proof)
	if err != nil {
		return fmt.Errorf("%w: not base64", ErrBadProof)
	}
	if c.Region == "" || c.APIAddr == "" {
		return errors.New("the member names no region or API address")
	}
	d := tls.Dialer{Config: a.TLS(c.Region)}
	conn, err := d.DialContext(ctx, "tcp", c.APIAddr)
	if err != nil {
		return fmt.Errorf("mutual TLS with %s: %w", c.APIAddr, err)
	}
	defer conn.Close()
	peers := conn.(*tls.Conn).ConnectionState().PeerCertificates
	if len(peers) == 0 {
		return fmt.Errorf("%s presented no certificate", c.APIAddr)
	}
	payload := c.Payload()
	sum := sha256.Sum256(payload)
	ok := false
	switch pub := peers[0].PublicKey.(type) {
	case *ecdsa.PublicKey:
		ok = ecdsa.VerifyASN1(pub, sum[:], sig)
	case ed25519.PublicKey:
		ok = ed25519.Verify(pub, payload, sig)
	case *rsa.PublicKey:
		ok = rsa.VerifyPKCS1v15(pub, crypto.SHA256, sum[:], sig) == nil
	default:
		return fmt.Errorf("%w: unsupported key type %T", ErrBadProof, pub)
	}
	if !ok {
		return ErrBadProof
	}
	return nil
}
