// Package spec is a second implementation of docs/PROTOCOL.md, written
// from the document with independent primitives only: the standard
// library's SHA-256 and HMAC, x/crypto's HKDF, X25519, ChaCha20-Poly1305
// and NaCl secretbox, and internal/testutil/refcrypto for the
// reduced-round suites x/crypto lacks. It never calls pkg/spipe or
// pkg/aead.
//
// It derives the published transcripts of testdata/protocol-v2 (Derive),
// against which pkg/spipe and pkg/spipe/mux are checked byte for byte,
// and plays a key holder that sends whatever frames a test wants (Dial),
// so the hostile-peer tests do not depend on the code they test to build
// what they send.
package spec

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"io"

	"golang.org/x/crypto/chacha20poly1305"
	"golang.org/x/crypto/curve25519"
	"golang.org/x/crypto/hkdf"
	"golang.org/x/crypto/nacl/secretbox"

	"github.com/spipe-dev/spipe/internal/testutil"
	"github.com/spipe-dev/spipe/internal/testutil/refcrypto"
)

// Suite is a suite as section 2.3 describes it.
type Suite struct {
	ID        byte
	Name      string
	Secretbox bool // header in the nonce, box = tag || ciphertext
	NonceSize int
	Rounds    int
}

// Suites are the suites of section 2.3.
var Suites = []Suite{
	{1, "chacha20-poly1305", false, 12, 20},
	{2, "xchacha20-poly1305", false, 24, 20},
	{3, "xsalsa20-poly1305", true, 24, 20},
	{4, "chacha12-poly1305", false, 12, 12},
	{5, "chacha8-poly1305", false, 12, 8},
	{6, "xsalsa12-poly1305", true, 24, 12},
}

// SuiteByID returns the suite with that id.
func SuiteByID(id int) (Suite, error) {
	for _, s := range Suites {
		if int(s.ID) == id {
			return s, nil
		}
	}
	return Suite{}, fmt.Errorf("no suite %d", id)
}

// The transcript file format (testdata/protocol-v2/README.md).
type (
	// File is one suite's transcripts.
	File struct {
		Description string    `json:"description"`
		Suite       string    `json:"suite"`
		SuiteID     int       `json:"suite_id"`
		Sessions    []Session `json:"sessions"`
	}
	// EndInputs is what one end of a session starts from.
	EndInputs struct {
		Nonce            testutil.Hex `json:"nonce"`
		EphemeralPrivate testutil.Hex `json:"ephemeral_private"` // empty: this end skips X25519
		Suites           []int        `json:"suites"`            // in preference order
		MaxPayload       int          `json:"max_payload"`
		PadTo            int          `json:"pad_to"`
	}
	// Frame is one frame of a session, with what went into it.
	Frame struct {
		Direction string            `json:"direction"` // "c2s" or "s2c"
		Counter   uint64            `json:"counter"`
		Type      string            `json:"type"` // section 4's name: "data", "open", "go-away", ...
		Data      testutil.Hex      `json:"data"`
		Fields    map[string]uint64 `json:"fields,omitempty"` // a stream frame's fields (section 7.1)
		Inner     testutil.Hex      `json:"inner_plaintext"`
		Nonce     testutil.Hex      `json:"nonce"`
		AD        testutil.Hex      `json:"additional_data"`
		Frame     testutil.Hex      `json:"frame"`
	}
	// Session is one complete session: inputs, every intermediate value
	// and every message, in protocol order.
	Session struct {
		Name    string       `json:"name"`
		KeyFile testutil.Hex `json:"key_file"`
		Context string       `json:"context"`
		Mode    int          `json:"mode"`
		// Story names which mode-3 traffic the session carries (empty:
		// the first story, MuxTraffic; see MuxStories).
		Story  string    `json:"story,omitempty"`
		Client EndInputs `json:"client"`
		Server EndInputs `json:"server"`

		PSK            testutil.Hex `json:"psk"`
		IPSK           testutil.Hex `json:"ipsk"`
		ClientHello    testutil.Hex `json:"client_hello"`
		ServerHello    testutil.Hex `json:"server_hello"`
		ChosenSuite    int          `json:"chosen_suite"`
		ForwardSecrecy bool         `json:"forward_secrecy"`
		SharedSecret   testutil.Hex `json:"shared_secret"`
		TranscriptHash testutil.Hex `json:"transcript_hash"`
		PRK            testutil.Hex `json:"prk"`
		KeyC2S         testutil.Hex `json:"key_client_to_server"`
		KeyS2C         testutil.Hex `json:"key_server_to_client"`
		KeyFinished    testutil.Hex `json:"key_finished"`
		ClientFinished testutil.Hex `json:"client_finished"`
		Frames         []Frame      `json:"frames"`
	}
)

// Types are the frame types of section 4, by name.
var Types = map[string]byte{
	"data": 0x01, "close-write": 0x02, "keepalive": 0x03,
	"open": 0x04, "stream data": 0x05, "end": 0x06, "reset": 0x07,
	"credit": 0x08, "go-away": 0x09, "ping": 0x0a, "pong": 0x0b,
}

// Fields lays out a stream frame's fields (section 7.1), in order, with
// their sizes in bytes.
var Fields = map[string][]struct {
	Name string
	Size int
}{
	"open":        {{"stream_id", 4}},
	"stream data": {{"stream_id", 4}},
	"end":         {{"stream_id", 4}},
	"reset":       {{"stream_id", 4}, {"code", 1}},
	"credit":      {{"stream_id", 4}, {"increment", 4}},
	"go-away":     {{"last_stream_id", 4}, {"code", 1}},
	"ping":        {{"opaque", 8}},
	"pong":        {{"opaque", 8}},
}

// Body is a frame's body (section 4): its data, then its fields, big
// endian, in the order section 7.1 gives them.
func Body(typ string, data []byte, fields map[string]uint64) []byte {
	b := append([]byte(nil), data...)
	for _, f := range Fields[typ] {
		v := fields[f.Name]
		switch f.Size {
		case 1:
			b = append(b, byte(v))
		case 4:
			b = binary.BigEndian.AppendUint32(b, uint32(v))
		case 8:
			b = binary.BigEndian.AppendUint64(b, v)
		}
	}
	return b
}

// Inner is a frame's inner plaintext: body, type byte, and zeros up to a
// multiple of padTo (section 4).
func Inner(typ string, body []byte, padTo int) []byte {
	n := len(body) + 1
	if padTo > 0 {
		n = (n + padTo - 1) / padTo * padTo
	}
	inner := make([]byte, n)
	copy(inner, body)
	inner[len(body)] = Types[typ]
	return inner
}

// Construction is a suite's AEAD from independent code: x/crypto for the
// full-strength suites, refcrypto for the reduced-round ones.
type Construction struct {
	Seal func(nonce, pt, ad []byte) []byte
	Open func(nonce, sealed, ad []byte) ([]byte, error)
}

// NewConstruction returns s under a 32-byte key.
func NewConstruction(s Suite, key []byte) Construction {
	k := (*[32]byte)(key)
	switch {
	case s.Secretbox && s.Rounds == 20:
		return Construction{
			Seal: func(nonce, pt, _ []byte) []byte { return secretbox.Seal(nil, pt, (*[24]byte)(nonce), k) },
			Open: func(nonce, box, _ []byte) ([]byte, error) {
				pt, ok := secretbox.Open(nil, box, (*[24]byte)(nonce), k)
				if !ok {
					return nil, fmt.Errorf("secretbox open failed")
				}
				return pt, nil
			},
		}
	case s.Secretbox:
		return Construction{
			Seal: func(nonce, pt, _ []byte) []byte { return refcrypto.SealSecretbox(k, (*[24]byte)(nonce), s.Rounds, pt) },
			Open: func(nonce, box, _ []byte) ([]byte, error) {
				return refcrypto.OpenSecretbox(k, (*[24]byte)(nonce), s.Rounds, box)
			},
		}
	case s.Rounds == 20:
		newAEAD := chacha20poly1305.New
		if s.NonceSize == 24 {
			newAEAD = chacha20poly1305.NewX
		}
		a, err := newAEAD(key)
		if err != nil {
			panic(err)
		}
		return Construction{
			Seal: func(nonce, pt, ad []byte) []byte { return a.Seal(nil, nonce, pt, ad) },
			Open: func(nonce, ct, ad []byte) ([]byte, error) { return a.Open(nil, nonce, ct, ad) },
		}
	}
	return Construction{
		Seal: func(nonce, pt, ad []byte) []byte { return refcrypto.SealRFC8439(k, nonce, s.Rounds, pt, ad) },
		Open: func(nonce, ct, ad []byte) ([]byte, error) { return refcrypto.OpenRFC8439(k, nonce, s.Rounds, ct, ad) },
	}
}

// NonceAndAD are frame counter's nonce and additional data for a frame
// with this header (section 4, Sealing).
func NonceAndAD(s Suite, counter uint64, header []byte) (nonce, ad []byte) {
	nonce = make([]byte, s.NonceSize)
	binary.LittleEndian.PutUint64(nonce, counter)
	if s.Secretbox {
		copy(nonce[8:], header)
		return nonce, nil
	}
	return nonce, header
}

// SealFrame seals an inner plaintext as frame counter: header, then the
// sealed payload.
func SealFrame(s Suite, c Construction, counter uint64, inner []byte) []byte {
	n := len(inner)
	header := []byte{byte(n >> 16), byte(n >> 8), byte(n)}
	nonce, ad := NonceAndAD(s, counter, header)
	return append(header, c.Seal(nonce, inner, ad)...)
}

func hmacSHA256(key []byte, parts ...[]byte) []byte {
	m := hmac.New(sha256.New, key)
	for _, p := range parts {
		m.Write(p)
	}
	return m.Sum(nil)
}

func expand(prk []byte, info string) []byte {
	out := make([]byte, 32)
	if _, err := io.ReadFull(hkdf.Expand(sha256.New, prk, []byte(info)), out); err != nil {
		panic(err)
	}
	return out
}

// ImportKey is section 1.2's IPSK of a key file under a context.
func ImportKey(keyFile []byte, context string) (psk, ipsk []byte) {
	h := sha256.Sum256(keyFile)
	info := append([]byte("spipe/2 key import"), byte(len(context)))
	return h[:], expand(h[:], string(append(info, context...)))
}

// Hello builds a hello (section 2.1): its body, then its MAC over the
// transcript so far and the body.
func Hello(typ byte, e EndInputs, mode, chosen int, ipsk, transcript []byte) []byte {
	var mask uint16
	for _, s := range e.Suites {
		mask |= 1 << s
	}
	b := []byte{2, typ, 0, byte(mode), byte(chosen)}
	pub := make([]byte, 32)
	if len(e.EphemeralPrivate) > 0 {
		b[2] = 1
		var err error
		if pub, err = curve25519.X25519(e.EphemeralPrivate, curve25519.Basepoint); err != nil {
			panic(err)
		}
	}
	b = binary.BigEndian.AppendUint16(b, mask)
	b = binary.BigEndian.AppendUint32(b, uint32(e.MaxPayload))
	b = append(b, e.Nonce...)
	b = append(b, pub...)
	return append(b, hmacSHA256(ipsk, transcript, b)...)
}

// Keys are section 3's key schedule.
type Keys struct {
	TH, PRK, C2S, S2C, Finished []byte
}

// Schedule derives the keys from the two hellos and the X25519 secret
// (empty without forward secrecy).
func Schedule(ipsk, clientHello, serverHello, shared []byte) Keys {
	th := sha256.Sum256(append(append([]byte(nil), clientHello...), serverHello...))
	prk := hkdf.Extract(sha256.New, append(append([]byte(nil), ipsk...), shared...), th[:])
	return Keys{
		TH: th[:], PRK: prk,
		C2S:      expand(prk, "spipe/2 client to server"),
		S2C:      expand(prk, "spipe/2 server to client"),
		Finished: expand(prk, "spipe/2 client finished"),
	}
}

// ClientFinished is section 2.2's message.
func ClientFinished(k Keys) []byte { return append([]byte{2, 3}, hmacSHA256(k.Finished, k.TH)...) }
