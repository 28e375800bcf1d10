package mux

import (
	"encoding/binary"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/spipe-dev/spipe/internal/testutil/spec"
)

// A receiver gives back the charge of everything its reader has taken
// (docs/PROTOCOL.md 7.3, Giving back): a sender whose reader keeps up is
// never left without window, whatever the sizes of its frames, empty
// ones included.

// tryTaker is a writer that can write without blocking and takes all it
// is given, as the spipe tool's sockets do when their peer keeps up: the
// read loop then writes arriving data to it directly (Stream.WriteTo).
type tryTaker struct{ n atomic.Int64 }

func (w *tryTaker) Write(p []byte) (int, error)    { w.n.Add(int64(len(p))); return len(p), nil }
func (w *tryTaker) TryWrite(p []byte) (int, error) { return w.Write(p) }

// countingWriter is a writer without TryWrite: WriteTo copies from the
// stream's buffer to it.
type countingWriter struct{ n atomic.Int64 }

func (w *countingWriter) Write(p []byte) (int, error) { w.n.Add(int64(len(p))); return len(p), nil }

// TestReaderThatKeepsUpIsNeverStalled: a key holder sends stream 1 frames
// back to back, as many as its window allows, packed into one TCP write
// (1-byte, 16-byte and empty frames, and a mix), while the stream's reader
// takes everything (by Read, by WriteTo into a plain writer, and by
// WriteTo into a writer the read loop writes to directly). Whenever its
// window runs out, the key holder waits for credit: it must come, until
// four windows' worth of charges have gone through.
func TestReaderThatKeepsUpIsNeverStalled(t *testing.T) {
	sizes := map[string]func(i int) int{
		"1-byte":  func(int) int { return 1 },
		"16-byte": func(int) int { return 16 },
		"empty":   func(int) int { return 0 },
		"mixed":   func(i int) int { return []int{0, 1, 16, 0, 0, 64, 1000, 0}[i%8] },
	}
	readers := map[string]func(st *Stream) func() int64{
		"Read": func(st *Stream) func() int64 {
			var n atomic.Int64
			go func() {
				buf := make([]byte, 1<<10)
				for {
					k, err := st.Read(buf)
					n.Add(int64(k))
					if err != nil {
						return
					}
				}
			}()
			return n.Load
		},
		"WriteTo": func(st *Stream) func() int64 {
			w := &countingWriter{}
			go st.WriteTo(w)
			return w.n.Load
		},
		"WriteTo direct": func(st *Stream) func() int64 {
			w := &tryTaker{}
			go st.WriteTo(w)
			return w.n.Load
		},
	}
	for sname, size := range sizes {
		for rname, reader := range readers {
			t.Run(sname+" frames, "+rname, func(t *testing.T) {
				p, srv := keyholderServer(t, &Config{KeepAlive: -1, MaxStreamWindow: MinStreamWindow}, false)
				require.NoError(t, p.Send("open", nil, id(1)))
				st := acceptWithin(t, srv).(*Stream)
				taken := reader(st)
				sent, frames := sendAsWindowAllows(t, p, 4*MinStreamWindow, size)
				eventually(t, func() bool { return taken() == sent }, fmt.Sprintf("the reader took all %d bytes", sent))
				t.Logf("%d frames, %d data bytes", frames, sent)
			})
		}
	}
}

// sendAsWindowAllows sends stream 1's frames, of the sizes size gives,
// until total charges have gone out: each time packing every frame the
// window allows into one write, then waiting (at most 10 s) for the
// credit that lets the next one go. It returns the data bytes and frames
// sent.
func sendAsWindowAllows(t *testing.T, p *spec.Peer, total int, size func(i int) int) (sent int64, frames int) {
	t.Helper()
	limit, spent := uint64(MinStreamWindow), uint64(frameCharge) // the open, sent without data
	var wire []byte
	for spent < uint64(total) {
		wire = wire[:0]
		for {
			n := size(frames)
			if spent+uint64(n)+frameCharge > limit || spent >= uint64(total) {
				break
			}
			wire = append(wire, p.Frame("stream data", make([]byte, n), id(1))...)
			spent += uint64(n) + frameCharge
			sent += int64(n)
			frames++
		}
		if len(wire) > 0 {
			_, err := p.Conn.Write(wire)
			require.NoError(t, err)
			continue
		}
		// Out of window: the credit must come.
		require.NoError(t, p.Conn.SetReadDeadline(time.Now().Add(10*time.Second)))
		typ, body, err := p.Read()
		require.NoError(t, err, "stalled: %d of %d charges sent, window %d; the reader has everything sent", spent, total, limit)
		if typ == spec.Types["credit"] {
			assert.Equal(t, uint32(1), binary.BigEndian.Uint32(body), "a credit for stream 1")
			limit += uint64(binary.BigEndian.Uint32(body[4:]))
		}
	}
	return sent, frames
}

var _ io.Writer = (*tryTaker)(nil)

// sizeTaker is a tryTaker that records the size of each write.
type sizeTaker struct {
	mu    sync.Mutex
	sizes []int
}

func (w *sizeTaker) Write(p []byte) (int, error) {
	w.mu.Lock()
	w.sizes = append(w.sizes, len(p))
	w.mu.Unlock()
	return len(p), nil
}
func (w *sizeTaker) TryWrite(p []byte) (int, error) { return w.Write(p) }

func (w *sizeTaker) get() []int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]int(nil), w.sizes...)
}

// TestLargeFramesInARunAreWrittenAtOnce: while WriteTo waits on a writer
// that takes data without blocking, the read loop writes a large frame's
// data straight from the frame even when more frames are already in,
// rather than copying it into the stream's buffer to gather it with them
// (a bulk stream's every byte copied once more).
func TestLargeFramesInARunAreWrittenAtOnce(t *testing.T) {
	p, srv := keyholderServer(t, &Config{KeepAlive: -1}, true)
	require.NoError(t, p.Send("open", nil, id(1)))
	st := acceptWithin(t, srv).(*Stream)
	w := &sizeTaker{}
	go st.WriteTo(w)
	eventually(t, func() bool {
		st.mu.Lock()
		defer st.mu.Unlock()
		return st.direct != nil && st.ring.len() == 0
	}, "WriteTo waits for data")
	before := len(w.get())
	const large = gatherBelow + 1000
	var wire []byte
	wire = append(wire, p.Frame("stream data", make([]byte, large), id(1))...)
	wire = append(wire, p.Frame("stream data", make([]byte, large), id(1))...)
	for range 4 {
		wire = append(wire, p.Frame("stream data", make([]byte, 100), id(1))...)
	}
	_, err := p.Conn.Write(wire)
	require.NoError(t, err)
	eventually(t, func() bool {
		n := 0
		for _, k := range w.get()[before:] {
			n += k
		}
		return n == 2*large+400
	}, "the writer has every byte")
	sizes := w.get()[before:]
	require.GreaterOrEqual(t, len(sizes), 2)
	assert.Equal(t, []int{large, large}, sizes[:2], "each large frame's data in a write of its own (writes %v)", sizes)
}
