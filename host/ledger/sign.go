package ledger

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// checkpointDomain separates checkpoint signatures from any other use of
// the same key.
const checkpointDomain = "toolgate-ledger-checkpoint-v1\n"

// checkpointMessage is what a checkpoint signs.
func checkpointMessage(upto Link) []byte {
	return []byte(checkpointDomain + strconv.FormatUint(upto.Seq, 10) + "\n" + upto.Hash + "\n")
}

// KeyID names a public key in checkpoints: the first 8 bytes of the
// SHA-256 of the raw key, in hex. It tells an operator which key signed
// without giving anything away.
func KeyID(pub ed25519.PublicKey) string {
	sum := sha256.Sum256(pub)
	return hex.EncodeToString(sum[:8])
}

// Signer signs checkpoints. Its key never leaves it: no method returns
// it, and it has no String or GoString that would print it.
type Signer struct {
	key   ed25519.PrivateKey
	keyID string
}

// Format implements fmt.Formatter so that a Signer printed by mistake
// (%v, %+v, %#v) shows only its key id.
func (s *Signer) Format(f fmt.State, _ rune) {
	fmt.Fprintf(f, "ledger.Signer{key_id: %s}", s.keyID)
}

// KeyID is the id of the signer's public key.
func (s *Signer) KeyID() string { return s.keyID }

// Public returns the signer's public key.
func (s *Signer) Public() ed25519.PublicKey { return s.key.Public().(ed25519.PublicKey) }

// NewSigner wraps an Ed25519 private key.
func NewSigner(key ed25519.PrivateKey) *Signer {
	return &Signer{key: key, keyID: KeyID(key.Public().(ed25519.PublicKey))}
}

// ErrBadKey is returned (wrapped with where the key came from, never
// with its content) for key material that cannot be used.
var ErrBadKey = errors.New("not an Ed25519 key")

// LoadSigner reads the signing key from a file (keyFile) or from an
// environment variable (keyEnv); exactly one may be set, and neither
// means no signing (nil, nil). The key is a PEM "PRIVATE KEY" (PKCS #8,
// as `openssl genpkey -algorithm ed25519` or `toolgate audit keygen`
// write it) or the base64 of a 32-byte Ed25519 seed.
func LoadSigner(keyFile, keyEnv string, lookupEnv func(string) (string, bool)) (*Signer, error) {
	var data []byte
	var from string
	switch {
	case keyFile != "" && keyEnv != "":
		return nil, errors.New("audit signing: set key_file or key_env, not both")
	case keyFile != "":
		from = "key_file " + keyFile
		b, err := os.ReadFile(keyFile)
		if err != nil {
			return nil, fmt.Errorf("audit signing: read %s: %w", from, errors.Unwrap(err))
		}
		data = b
	case keyEnv != "":
		from = "environment variable " + keyEnv
		if lookupEnv == nil {
			lookupEnv = os.LookupEnv
		}
		v, ok := lookupEnv(keyEnv)
		if !ok || strings.TrimSpace(v) == "" {
			return nil, fmt.Errorf("audit signing: %s is not set; export it with the key (PEM or base64 seed), or remove key_env", from)
		}
		data = []byte(v)
	default:
		return nil, nil
	}
	key, err := parsePrivate(data)
	if err != nil {
		return nil, fmt.Errorf("audit signing: %s: %w; create one with `toolgate audit keygen --out FILE`", from, err)
	}
	return NewSigner(key), nil
}

func parsePrivate(data []byte) (ed25519.PrivateKey, error) {
	if blk, _ := pem.Decode(bytes.TrimSpace(data)); blk != nil {
		if blk.Type != "PRIVATE KEY" {
			return nil, fmt.Errorf("%w: PEM block is %q, want \"PRIVATE KEY\"", ErrBadKey, blk.Type)
		}
		k, err := x509.ParsePKCS8PrivateKey(blk.Bytes)
		if err != nil {
			return nil, fmt.Errorf("%w: the PKCS #8 key does not parse", ErrBadKey)
		}
		ed, ok := k.(ed25519.PrivateKey)
		if !ok {
			return nil, fmt.Errorf("%w: the PKCS #8 key is a %T", ErrBadKey, k)
		}
		return ed, nil
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(data)))
	if err != nil || len(raw) != ed25519.SeedSize {
		return nil, fmt.Errorf("%w: neither a PEM \"PRIVATE KEY\" nor the base64 of a %d-byte seed", ErrBadKey, ed25519.SeedSize)
	}
	return ed25519.NewKeyFromSeed(raw), nil
}

// ParseVerifyKey reads the key checkpoints are verified with: a PEM
// "PUBLIC KEY" (PKIX), the base64 of a raw 32-byte public key, or a
// private key in one of the forms LoadSigner accepts (its public half
// is used).
func ParseVerifyKey(data []byte) (ed25519.PublicKey, error) {
	if blk, _ := pem.Decode(bytes.TrimSpace(data)); blk != nil && blk.Type == "PUBLIC KEY" {
		k, err := x509.ParsePKIXPublicKey(blk.Bytes)
		if err != nil {
			return nil, fmt.Errorf("%w: the PKIX public key does not parse", ErrBadKey)
		}
		ed, ok := k.(ed25519.PublicKey)
		if !ok {
			return nil, fmt.Errorf("%w: the public key is a %T", ErrBadKey, k)
		}
		return ed, nil
	}
	if raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(data))); err == nil && len(raw) == ed25519.PublicKeySize {
		return ed25519.PublicKey(raw), nil
	}
	priv, err := parsePrivate(data)
	if err != nil {
		return nil, fmt.Errorf("%w: expected a PEM \"PUBLIC KEY\", a base64 public key, or the private key", ErrBadKey)
	}
	return priv.Public().(ed25519.PublicKey), nil
}

// MarshalPrivate renders key as PEM PKCS #8 (for keygen).
func MarshalPrivate(key ed25519.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

// MarshalPublic renders pub as PEM PKIX.
func MarshalPublic(pub ed25519.PublicKey) ([]byte, error) {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), nil
}

// checkpoint is the body of a ledger_checkpoint record.
type checkpoint struct {
	Event    string    `json:"event"`
	At       time.Time `json:"at"`
	UptoSeq  uint64    `json:"upto_seq"`
	UptoHash string    `json:"upto_hash"`
	KeyID    string    `json:"key_id"`
	Sig      string    `json:"sig"`
}

// Checkpoint returns an unchained ledger_checkpoint record signing the
// chain up to and including upto.
func (s *Signer) Checkpoint(at time.Time, upto Link) []byte {
	sig := ed25519.Sign(s.key, checkpointMessage(upto))
	b, _ := json.Marshal(checkpoint{Event: KindCheckpoint, At: at.UTC(), UptoSeq: upto.Seq, UptoHash: upto.Hash,
		KeyID: s.keyID, Sig: base64.StdEncoding.EncodeToString(sig)})
	return append(b, '\n')
}

// Record renders an unchained bookkeeping record {"event":kind,"at":at,...fields}.
func Record(kind string, at time.Time, fields map[string]any) []byte {
	m := make(map[string]any, len(fields)+2)
	for k, v := range fields {
		m[k] = v
	}
	m["event"], m["at"] = kind, at.UTC()
	b, _ := json.Marshal(m)
	return append(b, '\n')
}
