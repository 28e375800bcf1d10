package spipe

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
)

// MinKeyMaterial is the least number of bytes a key file must hold.
const MinKeyMaterial = 32

// maxKeyMaterial bounds what a key file may hold, so a mistaken path (a
// device, a huge file) fails instead of filling memory.
const maxKeyMaterial = 1 << 20

// ErrShortKey is returned when key material is shorter than MinKeyMaterial.
var ErrShortKey = fmt.Errorf("key material shorter than %d bytes", MinKeyMaterial)

// Key is a pre-shared key: the SHA-256 of a key file's whole content, as
// spiped derives it, so any file works and both ends only need
// byte-identical files (a trailing newline counts). The key must hold 256
// bits of entropy, as the 64 hex digits `spipe keygen` writes or 32 random
// bytes do: a recorded handshake lets an attacker test guesses offline, so
// a passphrase is not a key. The hash is the PSK; the file content itself
// is not kept. A Key never prints its secret: String, GoString and
// Fingerprint show only a fingerprint.
type Key struct {
	psk [32]byte
}

// NewKey derives a Key from key material (a key file's whole content). It
// returns an error wrapping ErrShortKey if material has fewer than
// MinKeyMaterial bytes, and one for more than 1 MiB. Material is not
// retained.
func NewKey(material []byte) (*Key, error) {
	k, err := newKey(material)
	if err != nil {
		return nil, fmt.Errorf("spipe: %w", err)
	}
	return k, nil
}

func newKey(material []byte) (*Key, error) {
	switch {
	case len(material) < MinKeyMaterial:
		return nil, ErrShortKey
	case len(material) > maxKeyMaterial:
		return nil, errors.New("key material larger than 1 MiB")
	}
	return &Key{psk: sha256.Sum256(material)}, nil
}

// LoadKeyFile reads the key file at path and derives a Key from its whole
// content, as NewKey does. Errors name the path, never the content.
// Checking the file's permissions is the caller's business.
func LoadKeyFile(path string) (*Key, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("spipe: key file: %w", err)
	}
	defer f.Close()
	material, err := io.ReadAll(io.LimitReader(f, maxKeyMaterial+1))
	defer clear(material)
	if err != nil {
		return nil, fmt.Errorf("spipe: key file %s: %w", path, err)
	}
	k, err := newKey(material)
	if err != nil {
		return nil, fmt.Errorf("spipe: key file %s: %w", path, err)
	}
	return k, nil
}

// Fingerprint returns a short, non-secret identifier of the key: the
// first 8 bytes of HMAC-SHA256(PSK, "spipe key fingerprint") as 16 hex
// digits. Both ends of a tunnel show the same fingerprint exactly when
// their key files are byte-identical; it reveals nothing useful about the
// key.
func (k *Key) Fingerprint() string {
	m := hmac.New(sha256.New, k.psk[:])
	m.Write([]byte("spipe key fingerprint"))
	return hex.EncodeToString(m.Sum(nil)[:8])
}

// String returns "spipe.Key(<fingerprint>)", never the secret.
func (k *Key) String() string { return "spipe.Key(" + k.Fingerprint() + ")" }

// GoString is like String, so %#v does not print the secret either.
func (k *Key) GoString() string { return k.String() }
