package sealed

import (
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/sha256"
	"errors"
	"fmt"
	"unicode/utf8"

	"golang.org/x/crypto/argon2"
	"golang.org/x/text/unicode/norm"

	"github.com/spipe-dev/spipe/internal/keyaccess"
	"github.com/spipe-dev/spipe/pkg/spipe"
)

// Secret is what a file is sealed under and opened with: a spipe key
// (from a key file, [Key]) or a passphrase ([Passphrase]). A Secret never
// prints what it holds: String and GoString name its kind and, for a key,
// the key's fingerprint.
type Secret struct {
	psk        [32]byte // a key's PSK
	passphrase []byte   // a passphrase's bytes
	isKey      bool
	name       string
}

// Key returns the Secret of a spipe key, such as [spipe.LoadKeyFile]
// returns: the files it seals open with any key file of the same content.
// The key must hold 256 bits of entropy (docs/PROTOCOL.md 1.1): a file
// sealed under a weak key can be attacked offline without any work
// factor; use a passphrase for secrets people choose.
func Key(k *spipe.Key) *Secret {
	return &Secret{psk: keyaccess.PSK(k), isKey: true, name: "sealed.Key(" + k.Fingerprint() + ")"}
}

// Passphrase returns the Secret of a passphrase (without a trailing
// newline), stretched with Argon2id under the file's salt and the
// parameters in its header. A passphrase that is valid UTF-8 is first
// normalized to Unicode Normalization Form C, so that the same text typed
// on systems whose input methods compose accents differently (precomposed
// "é" against "e" and a combining acute) is the same secret; bytes that
// are not UTF-8 are used as they are (docs/FILE.md 1.2). It copies
// passphrase, and refuses an empty one.
func Passphrase(passphrase []byte) (*Secret, error) {
	if len(passphrase) == 0 {
		return nil, errors.New("sealed: empty passphrase")
	}
	p := append([]byte(nil), passphrase...)
	if utf8.Valid(p) && !norm.NFC.IsNormal(p) {
		nfc := norm.NFC.Bytes(p)
		clear(p)
		p = nfc
	}
	return &Secret{passphrase: p, name: "sealed.Passphrase"}, nil
}

// kind names the kind of secret, for messages.
func (s *Secret) kind() string {
	if s.isKey {
		return "key"
	}
	return "passphrase"
}

// String returns the kind of secret and, for a key, its fingerprint. The
// methods are on the value, so a Secret printed by value or by pointer,
// with any verb, shows no more.
func (s Secret) String() string { return s.name }

// GoString is String, so %#v does not print the secret either.
func (s Secret) GoString() string { return s.name }

// Argon2Params are the parameters of Argon2id (RFC 9106) with which a
// passphrase is stretched. A file records them in its header, so the
// opener needs only the passphrase.
type Argon2Params struct {
	Time      uint32 // passes over memory (t)
	MemoryKiB uint32 // memory in KiB (m)
	Threads   uint8  // lanes (p)
}

// DefaultArgon2 is RFC 9106's second recommended setting (section 4):
// three passes over 64 MiB in four lanes. It costs about a quarter of a
// second on this project's 2-vCPU test machine.
var DefaultArgon2 = Argon2Params{Time: 3, MemoryKiB: 64 << 10, Threads: 4}

// Limits on Argon2id parameters, for writers and readers alike: a file
// asking for more is malformed, so opening a hostile file costs at most
// 1 GiB of memory and 16 passes over it. Readers stop lower by default:
// see DefaultArgon2Ceiling.
const (
	MinArgon2MemoryKiB = 8 << 10
	MaxArgon2MemoryKiB = 1 << 20
	MaxArgon2Time      = 16
	MaxArgon2Threads   = 16
)

func (p Argon2Params) check() error {
	switch {
	case p.Time < 1 || p.Time > MaxArgon2Time:
		return fmt.Errorf("Argon2id passes %d outside 1 .. %d", p.Time, MaxArgon2Time)
	case p.MemoryKiB < MinArgon2MemoryKiB || p.MemoryKiB > MaxArgon2MemoryKiB:
		return fmt.Errorf("Argon2id memory %d KiB outside %d .. %d", p.MemoryKiB, MinArgon2MemoryKiB, MaxArgon2MemoryKiB)
	case p.Threads < 1 || p.Threads > MaxArgon2Threads:
		return fmt.Errorf("Argon2id lanes %d outside 1 .. %d", p.Threads, MaxArgon2Threads)
	}
	return nil
}

// DefaultArgon2Ceiling is the most a Reader or ReaderAt lets a file's
// header ask of Argon2id unless Options.Argon2Ceiling raises it: 256 MiB
// and 8 passes (4 and 2.7 times DefaultArgon2), any number of lanes the
// format allows. A header can ask for up to 1 GiB and 16 passes, which
// costs an opener 1 GiB of memory and 10 to 16 s on this project's 2-vCPU
// test machine before the MAC can fail; at this ceiling a hostile file
// costs at most 256 MiB and about 2 s. Files sealed with more need their
// opener to raise the ceiling knowingly (docs/FILE.md, "Limits").
var DefaultArgon2Ceiling = Argon2Params{Time: 8, MemoryKiB: 256 << 10, Threads: MaxArgon2Threads}

// exceeds reports whether p asks for more than ceiling allows in any of
// its three parameters.
func (p Argon2Params) exceeds(ceiling Argon2Params) bool {
	return p.Time > ceiling.Time || p.MemoryKiB > ceiling.MemoryKiB || p.Threads > ceiling.Threads
}

// String describes the parameters, for messages.
func (p Argon2Params) String() string {
	mem := fmt.Sprintf("%d KiB", p.MemoryKiB)
	if p.MemoryKiB%1024 == 0 {
		mem = fmt.Sprintf("%d MiB", p.MemoryKiB/1024)
	}
	return fmt.Sprintf("%s, %d passes, %d lanes", mem, p.Time, p.Threads)
}

// The HKDF labels of the file format: its own, never the pipe's.
const (
	labelHeader  = "spipe file/1 header"
	labelPayload = "spipe file/1 payload"
)

// fileKeys are the keys of one file.
type fileKeys struct {
	header  [32]byte // the header's HMAC key
	payload [32]byte // the chunks' AEAD key
}

// derive computes the file's keys from s and the header's first 56 bytes
// (its fields), as docs/FILE.md "Keys" gives. It refuses a secret of the
// other kind than the header records, with ErrWrongKey, and then, if
// ceiling is not nil, Argon2id parameters above it, with
// ErrArgon2Ceiling, before running Argon2id.
func (s *Secret) derive(h *Header, fields []byte, ceiling *Argon2Params) (*fileKeys, error) {
	var ikm []byte
	switch {
	case s.isKey && h.Argon2 == nil:
		ikm = s.psk[:]
	case !s.isKey && h.Argon2 != nil:
		p := h.Argon2
		if ceiling != nil && p.exceeds(*ceiling) {
			return nil, fmt.Errorf("%w: the file asks for %v; this opener allows at most %v", ErrArgon2Ceiling, *p, *ceiling)
		}
		ikm = argon2.IDKey(s.passphrase, h.Salt[:], p.Time, p.MemoryKiB, p.Threads, 32)
		defer clear(ikm)
	case s.isKey:
		return nil, fmt.Errorf("%w: the header says the file is sealed with a passphrase, not a key "+
			"(or the header was altered on purpose)", ErrWrongKey)
	default:
		return nil, fmt.Errorf("%w: the header says the file is sealed with a key, not a passphrase "+
			"(or the header was altered on purpose)", ErrWrongKey)
	}
	prk, err := hkdf.Extract(sha256.New, ikm, h.Salt[:])
	if err != nil {
		return nil, err
	}
	defer clear(prk)
	k := new(fileKeys)
	if err := expand(k.header[:], prk, []byte(labelHeader)); err != nil {
		return nil, err
	}
	info := append([]byte(labelPayload), fields[:offMAC]...)
	if err := expand(k.payload[:], prk, info); err != nil {
		return nil, err
	}
	return k, nil
}

func expand(out, prk, info []byte) error {
	b, err := hkdf.Expand(sha256.New, prk, string(info), len(out))
	copy(out, b)
	clear(b)
	return err
}

// headerMAC is HMAC-SHA256 under the header key over the header's
// fields.
func (k *fileKeys) headerMAC(header []byte) []byte {
	m := hmac.New(sha256.New, k.header[:])
	m.Write(header[:offMAC])
	return m.Sum(nil)
}
