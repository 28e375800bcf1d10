package spipe

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
)

// maxKeyMaterial bounds what a key file may hold, so a mistaken path (a
// device, a huge file) fails instead of filling memory.
const maxKeyMaterial = 1 << 20

// ErrEmptyKey is returned for empty key material: an empty key file is a
// mistake (a truncated copy, the wrong path), never a key.
var ErrEmptyKey = errors.New("key material is empty")

// Key is a pre-shared key: the SHA-256 of a key file's whole content, as
// spiped derives it, so any non-empty file works, as it does with spiped,
// and both ends only need byte-identical files (a trailing newline
// counts). The key must hold 256 bits of entropy, as the 64 hex digits
// `spipe keygen` writes or 32 random bytes do: a recorded handshake lets
// an attacker test guesses offline, so a passphrase, or a file shorter
// than 32 bytes, is a weak key. The hash is the PSK; the file content
// itself is not kept. A Key never prints its secret: String, GoString and
// Fingerprint show only a fingerprint. The zero value is not a key: a
// Config holding one fails Validate with ErrInvalidKey.
type Key struct {
	psk [32]byte
}

// NewKey derives a Key from key material (a key file's whole content). It
// returns an error wrapping ErrEmptyKey if material is empty, and one for
// more than 1 MiB. Material is not retained.
func NewKey(material []byte) (*Key, error) {
	k, err := newKey(material)
	if err != nil {
		return nil, fmt.Errorf("spipe: %w", err)
	}
	return k, nil
}

func newKey(material []byte) (*Key, error) {
	switch {
	case len(material) == 0:
		return nil, ErrEmptyKey
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

// zero reports whether k is the zero value: no SHA-256 output is all
// zeros (finding one would take some 2^256 tries), so only a Key not made
// by NewKey is. The comparison takes the same time whatever the key.
func (k *Key) zero() bool {
	return subtle.ConstantTimeCompare(k.psk[:], make([]byte, len(k.psk))) == 1
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
