package spipe

import (
	"bytes"
	"io"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/spipe-dev/spipe/pkg/spipe/frame"
)

// bigConfig is a Config with the largest frames, as the spipe tool uses.
func bigConfig(k *Key) *Config { return &Config{Keys: []*Key{k}, MaxPayload: MaxPayloadLimit} }

// scriptedReader answers each Read with the next scripted count of bytes
// (-1: fill p completely), then io.EOF, and records the size of every
// buffer it was given.
type scriptedReader struct {
	script []int
	asked  []int
	sent   bytes.Buffer
}

func (s *scriptedReader) Read(p []byte) (int, error) {
	s.asked = append(s.asked, len(p))
	if len(s.script) == 0 {
		return 0, io.EOF
	}
	n := s.script[0]
	s.script = s.script[1:]
	if n < 0 {
		n = len(p)
	}
	for i := range p[:n] {
		p[i] = byte(s.sent.Len() + i)
	}
	s.sent.Write(p[:n])
	return n, nil
}

// TestReadFromTiers: ReadFrom reads into a small frame until two reads in
// a row fill one, then into frames as large as the peer allows until a
// read returns less than it asked for; every read becomes one frame at
// once.
func TestReadFromTiers(t *testing.T) {
	k := newTestKey(t)
	small, big := DefaultMaxPayload-1, MaxPayloadLimit-1 // data per frame
	for _, tc := range []struct {
		name           string
		peerMaxPayload int
		script, asked  []int
	}{
		{
			name:           "both sides large",
			peerMaxPayload: MaxPayloadLimit,
			script:         []int{100, -1, -1, -1, 1000, 5, -1, 7, -1, -1, -1, 9},
			asked:          []int{small, small, small, big, big, small, small, small, small, small, big, big, small},
		},
		{
			name:           "peer at the default",
			peerMaxPayload: DefaultMaxPayload,
			script:         []int{100, -1, -1, 1000},
			asked:          []int{small, small, small, small, small},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ccfg := bigConfig(k)
			scfg := &Config{Keys: []*Key{k}, MaxPayload: tc.peerMaxPayload}
			cli, srv, sent := payloadPair(t, ccfg, scfg)
			src := &scriptedReader{script: tc.script}
			done := make(chan error, 1)
			go func() {
				_, err := cli.ReadFrom(src)
				if err == nil {
					err = cli.CloseWrite()
				}
				done <- err
			}()
			got, err := io.ReadAll(srv)
			require.NoError(t, err)
			require.NoError(t, <-done)
			assert.Equal(t, tc.asked, src.asked, "buffer sizes ReadFrom read into")
			assert.True(t, bytes.Equal(src.sent.Bytes(), got), "the stream arrives intact")
			// One frame per read, of exactly what it returned.
			var want []int
			for i, n := range tc.script {
				if n < 0 {
					n = tc.asked[i]
				}
				want = append(want, frame.PayloadSize(n, 0))
			}
			assert.Equal(t, append(want, frame.PayloadSize(0, 0)), sent())
		})
	}
}

// TestWriteTiers: a Write larger than a small frame is sealed in frames as
// large as the limit allows; small writes and control frames stay small.
func TestWriteTiers(t *testing.T) {
	cfg := bigConfig(newTestKey(t))
	cli, srv, sent := payloadPair(t, cfg, cfg)
	go io.Copy(io.Discard, srv)
	big := MaxPayloadLimit - 1
	for _, n := range []int{100, 3 * big, 70_000} {
		_, err := cli.Write(make([]byte, n))
		require.NoError(t, err)
	}
	require.NoError(t, cli.SendKeepalive())
	require.NoError(t, cli.CloseWrite())
	p := frame.PayloadSize
	want := []int{p(100, 0), p(big, 0), p(big, 0), p(big, 0), p(70_000, 0), p(0, 0), p(0, 0)}
	assert.Eventually(t, func() bool { return len(sent()) == len(want) }, 10*time.Second, 10*time.Millisecond)
	assert.Equal(t, want, sent())
}

// TestReaderWaitsOnTheSmallTier: a receiver takes a big buffer for frames
// the small one cannot hold, and once the stream pauses (the socket
// emptied at a frame boundary) waits for the next frame with the small
// buffer only.
func TestReaderWaitsOnTheSmallTier(t *testing.T) {
	cfg := bigConfig(newTestKey(t))
	cli, srv := connected(t, "tcp", cfg, cfg)
	msg := randomBytes(t, 3<<20)
	go func() {
		cli.Write(msg)
		cli.Write([]byte("end"))
	}()
	got := make([]byte, len(msg)+3)
	_, err := io.ReadFull(srv, got[:100])
	require.NoError(t, err)
	srv.in.mu.Lock()
	assert.Equal(t, srv.in.bigSize, len(srv.in.buf), "a largest frame is read into the big tier")
	srv.in.mu.Unlock()
	_, err = io.ReadFull(srv, got[100:])
	require.NoError(t, err)
	assert.Equal(t, append(msg, "end"...), got)

	require.NoError(t, srv.SetReadDeadline(time.Now().Add(50*time.Millisecond)))
	_, err = srv.Read(got)
	require.ErrorIs(t, err, os.ErrDeadlineExceeded)
	srv.in.mu.Lock()
	assert.Equal(t, srv.in.smallSize, len(srv.in.buf), "waiting holds only the small tier")
	srv.in.mu.Unlock()
}
