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

// maxKeyMaterial bounds what ReadKey reads, so a mistaken path (a device, a
// huge file) fails instead of filling memory.
const maxKeyMaterial = 1 << 20

// ErrShortKey is returned when key material is shorter than MinKeyMaterial.
var ErrShortKey = fmt.Errorf("key material shorter than %d bytes", MinKeyMaterial)

// Key is a pre-shared key: the SHA-256 of a key file's whole content, as
// spiped derives it, so any file of at least 32 bytes works (random bytes,
// hex text from `spipe keygen`, a passphrase file). The hash is the PSK; the
// file content itself is not kept. A Key never prints its secret: String
// and Format show only a fingerprint.
type Key struct {
	psk [32]byte
}

// NewKey derives a Key from key material (a key file's content). It returns
// ErrShortKey if material has fewer than MinKeyMaterial bytes. Material is
// not retained.
func NewKey(material []byte) (*Key, error) {
	k, err := newKey(material)
	if err != nil {
		return nil, fmt.Errorf("spipe: %w", err)
	}
	return k, nil
}

func newKey(material []byte) (*Key, error) {
	if len(material) < MinKeyMaterial {
		return nil, ErrShortKey
	}
	return &Key{psk: sha256.Sum256(material)}, nil
}

// ReadKey reads all of r (at most 1 MiB) and derives a Key from it, as
// NewKey does. Use it for `-k -` (key on standard input).
func ReadKey(r io.Reader) (*Key, error) {
	k, err := readKey(r)
	if err != nil {
		return nil, fmt.Errorf("spipe: reading key: %w", err)
	}
	return k, nil
}

func readKey(r io.Reader) (*Key, error) {
	material, err := io.ReadAll(io.LimitReader(r, maxKeyMaterial+1))
	defer clear(material)
	if err != nil {
		return nil, err
	}
	if len(material) > maxKeyMaterial {
		return nil, errors.New("key material larger than 1 MiB")
	}
	return newKey(material)
}

// LoadKeyFile reads the key file at path and derives a Key from its whole
// content. Errors name the path, never the content. Checking the file's
// permissions is the caller's business.
func LoadKeyFile(path string) (*Key, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("spipe: key file: %w", err)
	}
	defer f.Close()
	k, err := readKey(f)
	if err != nil {
		return nil, fmt.Errorf("spipe: key file %s: %w", path, err)
	}
	return k, nil
}

// Fingerprint returns a short, non-secret identifier of the key (16 hex
// digits of an HMAC of the PSK), for logs that must say which key matched.
// It reveals nothing useful about the key.
func (k *Key) Fingerprint() string {
	m := hmac.New(sha256.New, k.psk[:])
	m.Write([]byte("spipe key fingerprint"))
	return hex.EncodeToString(m.Sum(nil)[:8])
}

// String returns "spipe.Key(<fingerprint>)", never the secret.
func (k *Key) String() string { return "spipe.Key(" + k.Fingerprint() + ")" }

// GoString is like String, so %#v does not print the secret either.
func (k *Key) GoString() string { return k.String() }

// Equal reports, in constant time, whether k and o are the same key.
func (k *Key) Equal(o *Key) bool { return hmac.Equal(k.psk[:], o.psk[:]) }
