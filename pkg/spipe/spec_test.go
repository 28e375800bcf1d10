package spipe_test

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/chacha20poly1305"
	"golang.org/x/crypto/curve25519"
	"golang.org/x/crypto/hkdf"
	"golang.org/x/crypto/nacl/secretbox"

	"github.com/spipe-dev/spipe/internal/testutil"
	"github.com/spipe-dev/spipe/internal/testutil/refcrypto"
	"github.com/spipe-dev/spipe/pkg/aead"
	"github.com/spipe-dev/spipe/pkg/spipe"
)

// This file is a second implementation of docs/PROTOCOL.md, written from
// the document with independent primitives only (the standard library's
// SHA-256 and HMAC, x/crypto's HKDF, X25519, ChaCha20-Poly1305 and
// secretbox, and internal/testutil/refcrypto for the reduced-round suites,
// which x/crypto lacks). It never calls pkg/spipe or pkg/aead to compute
// an expected byte. It derives complete sessions into the published
// transcripts under testdata/protocol-v2 (with -update-vectors), checks
// that every byte of those files follows from their inputs, and checks
// that pkg/spipe, given the same randomness, puts exactly those bytes on
// the wire.

var updateVectors = flag.Bool("update-vectors", false, "rewrite testdata/protocol-v2 from this file's independent derivation")

// vectorDir is where the transcripts live, from this package's directory.
const vectorDir = "../../testdata/protocol-v2"

// specSuite is a suite as section 2.3 of the document describes it.
type specSuite struct {
	id        byte
	name      string
	secretbox bool // header in the nonce, box = tag || ciphertext
	nonceSize int
	rounds    int
}

var specSuites = []specSuite{
	{1, "chacha20-poly1305", false, 12, 20},
	{2, "xchacha20-poly1305", false, 24, 20},
	{3, "xsalsa20-poly1305", true, 24, 20},
	{4, "chacha12-poly1305", false, 12, 12},
	{5, "chacha8-poly1305", false, 12, 8},
	{6, "xsalsa12-poly1305", true, 24, 12},
}

// The transcript file format (testdata/protocol-v2/README.md).
type (
	vectorFile struct {
		Description string    `json:"description"`
		Suite       string    `json:"suite"`
		SuiteID     int       `json:"suite_id"`
		Sessions    []session `json:"sessions"`
	}
	endInputs struct {
		Nonce            testutil.Hex `json:"nonce"`
		EphemeralPrivate testutil.Hex `json:"ephemeral_private"` // empty: this end skips X25519
		Suites           []int        `json:"suites"`            // in preference order
		MaxPayload       int          `json:"max_payload"`
		PadTo            int          `json:"pad_to"`
	}
	frameVector struct {
		Direction string       `json:"direction"` // "c2s" or "s2c"
		Counter   uint64       `json:"counter"`
		Type      string       `json:"type"` // "data", "close-write", "keepalive"
		Data      testutil.Hex `json:"data"`
		Inner     testutil.Hex `json:"inner_plaintext"`
		Nonce     testutil.Hex `json:"nonce"`
		AD        testutil.Hex `json:"additional_data"`
		Frame     testutil.Hex `json:"frame"`
	}
	session struct {
		Name    string       `json:"name"`
		KeyFile testutil.Hex `json:"key_file"`
		Context string       `json:"context"`
		Mode    int          `json:"mode"`
		Client  endInputs    `json:"client"`
		Server  endInputs    `json:"server"`

		PSK            testutil.Hex  `json:"psk"`
		IPSK           testutil.Hex  `json:"ipsk"`
		ClientHello    testutil.Hex  `json:"client_hello"`
		ServerHello    testutil.Hex  `json:"server_hello"`
		ChosenSuite    int           `json:"chosen_suite"`
		ForwardSecrecy bool          `json:"forward_secrecy"`
		SharedSecret   testutil.Hex  `json:"shared_secret"`
		TranscriptHash testutil.Hex  `json:"transcript_hash"`
		PRK            testutil.Hex  `json:"prk"`
		KeyC2S         testutil.Hex  `json:"key_client_to_server"`
		KeyS2C         testutil.Hex  `json:"key_server_to_client"`
		KeyFinished    testutil.Hex  `json:"key_finished"`
		ClientFinished testutil.Hex  `json:"client_finished"`
		Frames         []frameVector `json:"frames"`
	}
)

// The session inputs every transcript shares; each varies the suite,
// forward secrecy, the context and padding.
var (
	vectorKeyFile = []byte("9a6f3c21d4e5b68a7c0d1e2f3a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d\n")
	vectorContext = "ssh to db.example.net:22"
)

// trafficItem is one frame a session sends: (direction, type, data).
type trafficItem struct {
	dir, typ string
	data     string
}

// streamTraffic is what each end of a mode-1 session sends, in order.
var streamTraffic = []trafficItem{
	{"c2s", "data", "hello, server"},
	{"s2c", "data", "hello, client"},
	{"c2s", "keepalive", ""},
	{"c2s", "data", "data may end in zero bytes\x00\x00"},
	{"c2s", "close-write", ""},
	{"s2c", "close-write", ""},
}

// yamuxMessage is a message of the multiplexed mode (section 7.1): the
// 12-byte header, then data.
func yamuxMessage(typ byte, flags uint16, stream uint32, length uint32, data string) string {
	b := []byte{0, typ}
	b = binary.BigEndian.AppendUint16(b, flags)
	b = binary.BigEndian.AppendUint32(b, stream)
	b = binary.BigEndian.AppendUint32(b, length)
	return string(b) + data
}

// The yamux message types and flags of section 7.1.
const (
	yamuxData, yamuxWindowUpdate, yamuxGoAway = 0, 1, 3
	yamuxSYN, yamuxACK, yamuxFIN              = 1, 2, 4
)

// muxTraffic is a mode-2 session, one yamux message per data frame: the
// client opens stream 1 and sends its data right behind the open, the
// server accepts and answers, each ends its direction, then the client
// closes the session (go away, then the carrier's close-write) and the
// server closes its end.
var muxTraffic = []trafficItem{
	{"c2s", "data", yamuxMessage(yamuxWindowUpdate, yamuxSYN, 1, 0, "")},
	{"c2s", "data", yamuxMessage(yamuxData, 0, 1, 13, "hello, server")},
	{"s2c", "data", yamuxMessage(yamuxWindowUpdate, yamuxACK, 1, 0, "")},
	{"s2c", "data", yamuxMessage(yamuxData, 0, 1, 13, "hello, client")},
	{"c2s", "data", yamuxMessage(yamuxWindowUpdate, yamuxFIN, 1, 0, "")},
	{"s2c", "data", yamuxMessage(yamuxWindowUpdate, yamuxFIN, 1, 0, "")},
	{"c2s", "keepalive", ""},
	{"c2s", "data", yamuxMessage(yamuxGoAway, 0, 0, 0, "")},
	{"c2s", "close-write", ""},
	{"s2c", "close-write", ""},
}

// trafficOf is what a session of mode sends.
func trafficOf(mode int) []trafficItem {
	if mode == 2 {
		return muxTraffic
	}
	return streamTraffic
}

// seeded returns 32 bytes standing in for fresh randomness, named so a
// reader of the file can see nothing else went into them.
func seeded(label string) []byte {
	h := sha256.Sum256([]byte("spipe/2 test vector " + label))
	return h[:]
}

// sessionInputs lays out one session's inputs.
func sessionInputs(s specSuite, mode int, fs, withContext bool, padTo int) session {
	name := fmt.Sprintf("%s fs=%v context=%v pad=%d", s.name, fs, withContext, padTo)
	if mode != 1 {
		name += fmt.Sprintf(" mode=%d", mode)
	}
	offer := func(first byte) []int {
		out := []int{int(first)}
		for _, d := range []int{1, 3} { // the default list (section 2.3)
			if d != int(first) {
				out = append(out, d)
			}
		}
		return out
	}
	se := session{
		Name: name, KeyFile: vectorKeyFile, Mode: mode,
		Client: endInputs{Nonce: seeded(name + " client nonce"), Suites: offer(s.id), MaxPayload: 65536, PadTo: padTo},
		Server: endInputs{Nonce: seeded(name + " server nonce"), Suites: offer(s.id), MaxPayload: 16384, PadTo: padTo},
	}
	if withContext {
		se.Context = vectorContext
	}
	if fs {
		se.Client.EphemeralPrivate = seeded(name + " client ephemeral")
		se.Server.EphemeralPrivate = seeded(name + " server ephemeral")
	}
	return se
}

func hmacSHA256(key []byte, parts ...[]byte) []byte {
	m := hmac.New(sha256.New, key)
	for _, p := range parts {
		m.Write(p)
	}
	return m.Sum(nil)
}

func expand(t testing.TB, prk []byte, info string) []byte {
	out := make([]byte, 32)
	_, err := io.ReadFull(hkdf.Expand(sha256.New, prk, []byte(info)), out)
	require.NoError(t, err)
	return out
}

// hello builds a hello body (section 2.1) and appends its MAC.
func hello(typ byte, e endInputs, mode, chosen int, ipsk, transcript []byte) []byte {
	var mask uint16
	for _, s := range e.Suites {
		mask |= 1 << s
	}
	b := []byte{2, typ, 0, byte(mode), byte(chosen)}
	pub := make([]byte, 32)
	if len(e.EphemeralPrivate) > 0 {
		b[2] = 1
		var err error
		pub, err = curve25519.X25519(e.EphemeralPrivate, curve25519.Basepoint)
		if err != nil {
			panic(err)
		}
	}
	b = binary.BigEndian.AppendUint16(b, mask)
	b = binary.BigEndian.AppendUint32(b, uint32(e.MaxPayload))
	b = append(b, e.Nonce...)
	b = append(b, pub...)
	return append(b, hmacSHA256(ipsk, transcript, b)...)
}

// derive computes every output of a session from its inputs, following the
// document step by step.
func derive(t testing.TB, s specSuite, in session) session {
	out := in
	psk := sha256.Sum256(in.KeyFile) // section 1
	out.PSK = psk[:]
	info := append([]byte("spipe/2 key import"), byte(len(in.Context)))
	out.IPSK = expand(t, psk[:], string(append(info, in.Context...)))

	out.ClientHello = hello(1, in.Client, in.Mode, 0, out.IPSK, nil) // section 2.1
	// The server chooses the first suite of its list that the client
	// offers (section 2.3), answers the client's mode, and sends a key
	// only if the client did and it does X25519 itself (section 2.4).
	for _, sv := range in.Server.Suites {
		if contains(in.Client.Suites, sv) {
			out.ChosenSuite = sv
			break
		}
	}
	require.Equal(t, int(s.id), out.ChosenSuite)
	server := in.Server
	if len(in.Client.EphemeralPrivate) == 0 {
		server.EphemeralPrivate = nil
	}
	out.ServerHello = hello(2, server, in.Mode, out.ChosenSuite, out.IPSK, out.ClientHello)

	out.ForwardSecrecy = len(server.EphemeralPrivate) > 0 // section 3
	out.SharedSecret = nil
	if out.ForwardSecrecy {
		serverPub, err := curve25519.X25519(server.EphemeralPrivate, curve25519.Basepoint)
		require.NoError(t, err)
		out.SharedSecret, err = curve25519.X25519(in.Client.EphemeralPrivate, serverPub)
		require.NoError(t, err)
	}
	th := sha256.Sum256(append(append([]byte(nil), out.ClientHello...), out.ServerHello...))
	out.TranscriptHash = th[:]
	out.PRK = hkdf.Extract(sha256.New, append(append([]byte(nil), out.IPSK...), out.SharedSecret...), th[:])
	out.KeyC2S = expand(t, out.PRK, "spipe/2 client to server")
	out.KeyS2C = expand(t, out.PRK, "spipe/2 server to client")
	out.KeyFinished = expand(t, out.PRK, "spipe/2 client finished")
	out.ClientFinished = append([]byte{2, 3}, hmacSHA256(out.KeyFinished, th[:])...) // section 2.2

	out.Frames = nil // section 4
	counters := map[string]uint64{}
	for _, tr := range trafficOf(in.Mode) {
		key, end := out.KeyC2S, in.Client
		if tr.dir == "s2c" {
			key, end = out.KeyS2C, in.Server
		}
		f := frameVector{Direction: tr.dir, Counter: counters[tr.dir], Type: tr.typ, Data: []byte(tr.data)}
		counters[tr.dir]++
		n := len(f.Data) + 1
		if end.PadTo > 0 {
			n = (n + end.PadTo - 1) / end.PadTo * end.PadTo
		}
		f.Inner = make([]byte, n)
		copy(f.Inner, f.Data)
		f.Inner[len(f.Data)] = map[string]byte{"data": 1, "close-write": 2, "keepalive": 3}[tr.typ]
		header := []byte{byte(n >> 16), byte(n >> 8), byte(n)}
		f.Nonce = make([]byte, s.nonceSize)
		binary.LittleEndian.PutUint64(f.Nonce, f.Counter)
		if s.secretbox {
			copy(f.Nonce[8:], header)
			f.AD = nil
		} else {
			f.AD = header
		}
		f.Frame = append(header, suiteConstruction(t, s, key).seal(f.Nonce, f.Inner, f.AD)...)
		out.Frames = append(out.Frames, f)
	}
	return out
}

func contains(list []int, v int) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// construction is a suite's AEAD (section 2.3) from independent code:
// x/crypto for the full-strength suites, internal/testutil/refcrypto for
// the reduced-round ones.
type construction struct {
	seal func(nonce, pt, ad []byte) []byte
	open func(nonce, sealed, ad []byte) ([]byte, error)
}

func suiteConstruction(t testing.TB, s specSuite, key []byte) construction {
	k := (*[32]byte)(key)
	switch {
	case s.secretbox && s.rounds == 20:
		return construction{
			seal: func(nonce, pt, _ []byte) []byte { return secretbox.Seal(nil, pt, (*[24]byte)(nonce), k) },
			open: func(nonce, box, _ []byte) ([]byte, error) {
				pt, ok := secretbox.Open(nil, box, (*[24]byte)(nonce), k)
				if !ok {
					return nil, fmt.Errorf("secretbox open failed")
				}
				return pt, nil
			},
		}
	case s.secretbox:
		return construction{
			seal: func(nonce, pt, _ []byte) []byte { return refcrypto.SealSecretbox(k, (*[24]byte)(nonce), s.rounds, pt) },
			open: func(nonce, box, _ []byte) ([]byte, error) {
				return refcrypto.OpenSecretbox(k, (*[24]byte)(nonce), s.rounds, box)
			},
		}
	case s.rounds == 20:
		newAEAD := chacha20poly1305.New
		if s.nonceSize == 24 {
			newAEAD = chacha20poly1305.NewX
		}
		a, err := newAEAD(key)
		require.NoError(t, err)
		return construction{
			seal: func(nonce, pt, ad []byte) []byte { return a.Seal(nil, nonce, pt, ad) },
			open: func(nonce, ct, ad []byte) ([]byte, error) { return a.Open(nil, nonce, ct, ad) },
		}
	}
	return construction{
		seal: func(nonce, pt, ad []byte) []byte { return refcrypto.SealRFC8439(k, nonce, s.rounds, pt, ad) },
		open: func(nonce, ct, ad []byte) ([]byte, error) { return refcrypto.OpenRFC8439(k, nonce, s.rounds, ct, ad) },
	}
}

func vectorPath(s specSuite) string { return filepath.Join(vectorDir, s.name+".json") }

// loadVectors reads the published transcripts of suite s.
func loadVectors(t *testing.T, s specSuite) vectorFile {
	t.Helper()
	b, err := os.ReadFile(vectorPath(s))
	require.NoError(t, err)
	var f vectorFile
	require.NoError(t, json.Unmarshal(b, &f))
	require.Equal(t, s.name, f.Suite)
	require.Equal(t, int(s.id), f.SuiteID)
	require.Len(t, f.Sessions, 10, "mode 1: fs x context x padding; mode 2: two of them")
	return f
}

// TestWriteVectors rewrites the transcripts with -update-vectors.
func TestWriteVectors(t *testing.T) {
	if !*updateVectors {
		t.Skip("run with -update-vectors to rewrite testdata/protocol-v2")
	}
	require.NoError(t, os.MkdirAll(vectorDir, 0o755))
	for _, s := range specSuites {
		f := vectorFile{
			Description: "spipe protocol 2 sessions for suite " + s.name + ", derived from docs/PROTOCOL.md " +
				"with independent primitives (pkg/spipe/spec_test.go); see README.md in this directory",
			Suite: s.name, SuiteID: int(s.id),
		}
		for _, fs := range []bool{true, false} {
			for _, ctx := range []bool{false, true} {
				for _, pad := range []int{0, 64} {
					f.Sessions = append(f.Sessions, derive(t, s, sessionInputs(s, 1, fs, ctx, pad)))
				}
			}
		}
		// A mode-2 handshake differs only in the mode byte: two sessions
		// show it, and the yamux messages of section 7 in the frames.
		f.Sessions = append(f.Sessions,
			derive(t, s, sessionInputs(s, 2, true, false, 0)),
			derive(t, s, sessionInputs(s, 2, false, true, 64)))
		b, err := json.MarshalIndent(f, "", "  ")
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(vectorPath(s), append(b, '\n'), 0o644))
	}
}

// TestVectorsFollowFromTheirInputs re-derives every byte of every
// published transcript from the inputs it records, and opens every frame
// with the independent AEADs: the files are what the document says.
func TestVectorsFollowFromTheirInputs(t *testing.T) {
	for _, s := range specSuites {
		f := loadVectors(t, s)
		for _, se := range f.Sessions {
			want, err := json.Marshal(derive(t, s, se))
			require.NoError(t, err)
			got, err := json.Marshal(se)
			require.NoError(t, err)
			assert.JSONEq(t, string(want), string(got), "%s: a recorded output differs from its derivation", se.Name)
			for _, fr := range se.Frames {
				key := se.KeyC2S
				if fr.Direction == "s2c" {
					key = se.KeyS2C
				}
				inner, err := suiteConstruction(t, s, key).open(fr.Nonce, fr.Frame[3:], fr.AD)
				require.NoError(t, err, "%s: frame %s %d", se.Name, fr.Direction, fr.Counter)
				assert.Equal(t, []byte(fr.Inner), inner)
			}
		}
	}
}

// TestVectorsCoverTheMatrix: the files hold every suite with forward
// secrecy on and off, with and without a context, padded and not, in mode
// 1, and sessions of mode 2, with every frame type in each direction's
// traffic.
func TestVectorsCoverTheMatrix(t *testing.T) {
	for _, s := range specSuites {
		seen := map[string]bool{}
		for _, se := range loadVectors(t, s).Sessions {
			seen[fmt.Sprintf("mode=%d fs=%v ctx=%v pad=%v", se.Mode, se.ForwardSecrecy, se.Context != "", se.Client.PadTo > 0)] = true
			assert.Equal(t, byte(se.Mode), []byte(se.ClientHello)[3], "%s: the mode byte", se.Name)
			assert.Equal(t, byte(se.Mode), []byte(se.ServerHello)[3], "%s: the mode byte answered", se.Name)
			assert.Equal(t, se.ForwardSecrecy, len(se.SharedSecret) == 32, se.Name)
			types := map[string]bool{}
			for _, fr := range se.Frames {
				types[fr.Direction+" "+fr.Type] = true
			}
			assert.Len(t, types, 5, "%s: data, keepalive, close-write c2s; data, close-write s2c", se.Name)
		}
		assert.Len(t, seen, 10, s.name)
	}
}

// recordingConn keeps a copy of everything written to it.
type recordingConn struct {
	net.Conn
	mu      sync.Mutex
	written []byte
}

func (r *recordingConn) Write(p []byte) (int, error) {
	r.mu.Lock()
	r.written = append(r.written, p...)
	r.mu.Unlock()
	return r.Conn.Write(p)
}

func (r *recordingConn) bytes() []byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]byte(nil), r.written...)
}

// endConfig is the Config of one end of a published session, drawing its
// randomness from the recorded nonce and ephemeral key.
func endConfig(t *testing.T, se session, e endInputs) *spipe.Config {
	key, err := spipe.NewKey(se.KeyFile)
	require.NoError(t, err)
	c := &spipe.Config{Keys: []*spipe.Key{key}, Context: se.Context, MaxPayload: e.MaxPayload, PadTo: e.PadTo,
		Multiplex: se.Mode == 2}
	for _, s := range e.Suites {
		c.Suites = append(c.Suites, aead.Suite(s))
	}
	if len(e.EphemeralPrivate) == 0 {
		c.ForwardSecrecy = spipe.ForwardSecrecyOff
	}
	random := append(append([]byte(nil), e.Nonce...), e.EphemeralPrivate...)
	return spipe.WithRand(c, bytes.NewReader(random))
}

// TestImplementationMatchesVectors runs pkg/spipe's client and server with
// each published session's randomness and sends the session's traffic:
// every byte each end puts on the wire must be the transcript's.
func TestImplementationMatchesVectors(t *testing.T) {
	for _, s := range specSuites {
		for _, se := range loadVectors(t, s).Sessions {
			a, b := net.Pipe()
			ca, cb := &recordingConn{Conn: a}, &recordingConn{Conn: b}
			cli := spipe.Client(ca, endConfig(t, se, se.Client))
			srv := spipe.Server(cb, endConfig(t, se, se.Server))
			var wg sync.WaitGroup
			var got [2][]byte
			var errs [4]error
			wg.Add(4)
			send := func(i int, c *spipe.Conn, dir string) {
				defer wg.Done()
				for _, tr := range trafficOf(se.Mode) {
					if tr.dir != dir || errs[i] != nil {
						continue
					}
					switch tr.typ {
					case "data":
						_, errs[i] = c.Write([]byte(tr.data))
					case "keepalive":
						errs[i] = c.SendKeepalive()
					case "close-write":
						errs[i] = c.CloseWrite()
					}
				}
			}
			go send(0, cli, "c2s")
			go send(1, srv, "s2c")
			go func() { defer wg.Done(); got[0], errs[2] = io.ReadAll(srv) }()
			go func() { defer wg.Done(); got[1], errs[3] = io.ReadAll(cli) }()
			wg.Wait()
			for _, err := range errs {
				require.NoError(t, err, se.Name)
			}
			cli.Close()
			srv.Close()

			var wantC2S, wantS2C, dataC2S, dataS2C []byte
			wantC2S = append(append(wantC2S, se.ClientHello...), se.ClientFinished...)
			wantS2C = append(wantS2C, se.ServerHello...)
			for _, f := range se.Frames {
				if f.Direction == "c2s" {
					wantC2S = append(wantC2S, f.Frame...)
					dataC2S = append(dataC2S, f.Data...)
				} else {
					wantS2C = append(wantS2C, f.Frame...)
					dataS2C = append(dataS2C, f.Data...)
				}
			}
			assert.Equal(t, hex.EncodeToString(wantC2S), hex.EncodeToString(ca.bytes()), "%s: client to server", se.Name)
			assert.Equal(t, hex.EncodeToString(wantS2C), hex.EncodeToString(cb.bytes()), "%s: server to client", se.Name)
			assert.Equal(t, dataC2S, got[0], se.Name)
			assert.Equal(t, dataS2C, got[1], se.Name)
			st := cli.ConnectionState()
			assert.Equal(t, aead.Suite(se.ChosenSuite), st.Suite)
			assert.Equal(t, se.ForwardSecrecy, st.ForwardSecrecy)
			assert.Equal(t, se.Mode == 2, st.Multiplexed, se.Name)
			assert.Equal(t, se.Mode == 2, srv.ConnectionState().Multiplexed, se.Name)
		}
	}
}
