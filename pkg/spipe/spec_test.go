package spipe_test

import (
	"bytes"
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

	"github.com/spipe-dev/spipe/internal/testutil"
	"github.com/spipe-dev/spipe/internal/testutil/spec"
	"github.com/spipe-dev/spipe/pkg/aead"
	"github.com/spipe-dev/spipe/pkg/spipe"
)

// The transcripts under testdata/protocol-v2 come from
// internal/testutil/spec, a second implementation of docs/PROTOCOL.md
// written from the document with independent primitives only (the
// standard library's SHA-256 and HMAC, x/crypto's HKDF, X25519,
// ChaCha20-Poly1305 and secretbox, and internal/testutil/refcrypto for the
// reduced-round suites), which never calls pkg/spipe or pkg/aead. This
// file writes them (with -update-vectors), checks that every byte of the
// files follows from their inputs, and checks that pkg/spipe, given the
// same randomness, puts exactly those bytes on the wire in mode 1; package
// mux checks its own mode-3 sessions the same way.

var updateVectors = flag.Bool("update-vectors", false, "rewrite testdata/protocol-v2 from the independent derivation (internal/testutil/spec)")

// vectorDir is where the transcripts live, from this package's directory.
const vectorDir = "../../testdata/protocol-v2"

func vectorPath(s spec.Suite) string { return filepath.Join(vectorDir, s.Name+".json") }

// loadVectors reads the published transcripts of suite s.
func loadVectors(t *testing.T, s spec.Suite) spec.File {
	t.Helper()
	b, err := os.ReadFile(vectorPath(s))
	require.NoError(t, err)
	var f spec.File
	require.NoError(t, json.Unmarshal(b, &f))
	require.Equal(t, s.Name, f.Suite)
	require.Equal(t, int(s.ID), f.SuiteID)
	require.Len(t, f.Sessions, 13, "mode 1: fs x context x padding; mode 3: two of them, and one of each further story")
	return f
}

func derive(t *testing.T, s spec.Suite, in spec.Session) spec.Session {
	t.Helper()
	out, err := spec.Derive(s, in)
	require.NoError(t, err)
	return out
}

// TestWriteVectors rewrites the transcripts with -update-vectors.
func TestWriteVectors(t *testing.T) {
	if !*updateVectors {
		t.Skip("run with -update-vectors to rewrite testdata/protocol-v2")
	}
	require.NoError(t, os.MkdirAll(vectorDir, 0o755))
	for _, s := range spec.Suites {
		f := spec.File{
			Description: "spipe protocol 2 sessions for suite " + s.Name + ", derived from docs/PROTOCOL.md " +
				"with independent primitives (internal/testutil/spec); see README.md in this directory",
			Suite: s.Name, SuiteID: int(s.ID),
		}
		for _, fs := range []bool{true, false} {
			for _, ctx := range []bool{false, true} {
				for _, pad := range []int{0, 64} {
					f.Sessions = append(f.Sessions, derive(t, s, spec.Inputs(s, 1, fs, ctx, pad)))
				}
			}
		}
		// A mode-3 handshake differs only in the mode byte: two sessions
		// show it, and the stream frames of section 7.
		f.Sessions = append(f.Sessions,
			derive(t, s, spec.Inputs(s, 3, true, false, 0)),
			derive(t, s, spec.Inputs(s, 3, false, true, 64)),
			// Further stories: the rules of section 7 the first does not show.
			derive(t, s, spec.StoryInputs(s, 3, "client-data", true, true, 64)),
			derive(t, s, spec.StoryInputs(s, 3, "protocol-error", true, false, 0)),
			derive(t, s, spec.StoryInputs(s, 3, "go-away-refuses", false, false, 64)))
		b, err := json.MarshalIndent(f, "", "  ")
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(vectorPath(s), append(b, '\n'), 0o644))
	}
}

// TestVectorsFollowFromTheirInputs re-derives every byte of every
// published transcript from the inputs it records, and opens every frame
// with the independent AEADs: the files are what the document says.
func TestVectorsFollowFromTheirInputs(t *testing.T) {
	for _, s := range spec.Suites {
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
				inner, err := spec.NewConstruction(s, key).Open(fr.Nonce, fr.Frame[3:], fr.AD)
				require.NoError(t, err, "%s: frame %s %d", se.Name, fr.Direction, fr.Counter)
				assert.Equal(t, []byte(fr.Inner), inner)
			}
		}
	}
}

// TestVectorsCoverTheMatrix: the files hold every suite with forward
// secrecy on and off, with and without a context, padded and not, in mode
// 1, and sessions of mode 3, one of each story; mode 1's traffic has every
// mode-1 frame type in each direction it can go, and mode 3's first story
// every stream frame type.
func TestVectorsCoverTheMatrix(t *testing.T) {
	for _, s := range spec.Suites {
		seen := map[string]bool{}
		for _, se := range loadVectors(t, s).Sessions {
			seen[fmt.Sprintf("mode=%d story=%q fs=%v ctx=%v pad=%v", se.Mode, se.Story, se.ForwardSecrecy, se.Context != "", se.Client.PadTo > 0)] = true
			assert.Equal(t, byte(se.Mode), []byte(se.ClientHello)[3], "%s: the mode byte", se.Name)
			assert.Equal(t, byte(se.Mode), []byte(se.ServerHello)[3], "%s: the mode byte answered", se.Name)
			assert.Equal(t, se.ForwardSecrecy, len(se.SharedSecret) == 32, se.Name)
			types := map[string]bool{}
			for _, fr := range se.Frames {
				types[fr.Type] = true
				if se.Mode == 1 {
					types[fr.Direction+" "+fr.Type] = true
				}
			}
			if se.Mode == 1 {
				for _, want := range []string{"c2s data", "c2s keepalive", "c2s close-write", "s2c data", "s2c close-write"} {
					assert.True(t, types[want], "%s: no %s frame", se.Name, want)
				}
				continue
			}
			if se.Story != "" {
				assert.Len(t, se.Frames, len(spec.MuxStories[se.Story]), se.Name)
				continue
			}
			for name := range spec.Fields {
				assert.True(t, types[name], "%s: no %s frame", se.Name, name)
			}
			assert.True(t, types["close-write"], se.Name)
		}
		assert.Len(t, seen, 10+len(spec.MuxStories), s.Name)
	}
}

// endConfig is the Config of one end of a published session, drawing its
// randomness from the recorded nonce and ephemeral key.
func endConfig(t *testing.T, se spec.Session, e spec.EndInputs) *spipe.Config {
	key, err := spipe.NewKey(se.KeyFile)
	require.NoError(t, err)
	c := &spipe.Config{Keys: []*spipe.Key{key}, Context: se.Context, MaxPayload: e.MaxPayload, PadTo: e.PadTo}
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
// each published mode-1 session's randomness and sends the session's
// traffic: every byte each end puts on the wire must be the transcript's.
// (The mode-3 sessions are package mux's.)
func TestImplementationMatchesVectors(t *testing.T) {
	for _, s := range spec.Suites {
		for _, se := range loadVectors(t, s).Sessions {
			if se.Mode != 1 {
				continue
			}
			a, b := net.Pipe()
			ca, cb := &testutil.RecordingConn{Conn: a}, &testutil.RecordingConn{Conn: b}
			cli := spipe.Client(ca, endConfig(t, se, se.Client))
			srv := spipe.Server(cb, endConfig(t, se, se.Server))
			var wg sync.WaitGroup
			var got [2][]byte
			var errs [4]error
			wg.Add(4)
			send := func(i int, c *spipe.Conn, dir string) {
				defer wg.Done()
				for _, tr := range spec.StreamTraffic {
					if tr.Dir != dir || errs[i] != nil {
						continue
					}
					switch tr.Type {
					case "data":
						_, errs[i] = c.Write([]byte(tr.Data))
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
			assert.Equal(t, hex.EncodeToString(wantC2S), hex.EncodeToString(ca.Bytes()), "%s: client to server", se.Name)
			assert.Equal(t, hex.EncodeToString(wantS2C), hex.EncodeToString(cb.Bytes()), "%s: server to client", se.Name)
			assert.Equal(t, dataC2S, got[0], se.Name)
			assert.Equal(t, dataS2C, got[1], se.Name)
			st := cli.ConnectionState()
			assert.Equal(t, aead.Suite(se.ChosenSuite), st.Suite)
			assert.Equal(t, se.ForwardSecrecy, st.ForwardSecrecy)
			assert.False(t, st.Multiplexed, se.Name)
			assert.False(t, srv.ConnectionState().Multiplexed, se.Name)
		}
	}
}
