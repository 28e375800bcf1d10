package stress

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"flag"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// long selects the long form (make stress): the sizes the issue names.
// Without it the same tests run small enough for make test.
var long = flag.Bool("stress", os.Getenv("SPIPE_STRESS") != "", "run the long form of the stress tests")

// pick returns short or, in the long form, full.
func pick[T any](short, full T) T {
	if *long {
		return full
	}
	return short
}

// firstMessageDeadline is the engine's default first-message deadline:
// the listener cuts a connection that has not sent a whole ClientHello by
// then.
const firstMessageDeadline = 3 * time.Second

// record is what the echo target saw on one connection.
type record struct {
	id    uint64
	got   []byte // kept only when the target keeps bytes
	sum   [32]byte
	n     int64
	clean bool // ended with EOF (a clean close), not an error
	err   error
}

// target is an echo server that remembers, per connection id (the first
// 8 bytes a client sends), what it received and how the stream ended.
type target struct {
	ln        net.Listener
	keepBytes bool
	mu        sync.Mutex
	recs      map[uint64]*record
	wg        sync.WaitGroup
}

func startTarget(t *testing.T, keepBytes bool) *target {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	tg := &target{ln: ln, keepBytes: keepBytes, recs: map[uint64]*record{}}
	tg.wg.Add(1)
	go func() {
		defer tg.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			tg.wg.Add(1)
			go func() { defer tg.wg.Done(); tg.serve(c.(*net.TCPConn)) }()
		}
	}()
	t.Cleanup(func() { ln.Close(); tg.wg.Wait() })
	return tg
}

func (tg *target) addr() string { return tg.ln.Addr().String() }

// serve echoes c, hashing what it reads, and records the outcome under
// the connection's id.
func (tg *target) serve(c *net.TCPConn) {
	defer c.Close()
	rec := &record{}
	h := sha256.New()
	buf := make([]byte, 32<<10)
	var idb [8]byte
	have := 0
	for {
		n, err := c.Read(buf)
		if n > 0 {
			chunk := buf[:n]
			if have < 8 {
				k := copy(idb[have:], chunk)
				have += k
				if have == 8 {
					rec.id = binary.BigEndian.Uint64(idb[:])
				}
			}
			h.Write(chunk)
			rec.n += int64(n)
			if tg.keepBytes {
				rec.got = append(rec.got, chunk...)
			}
			if _, werr := c.Write(chunk); werr != nil && err == nil {
				err = werr
			}
		}
		if err != nil {
			rec.clean = errors.Is(err, io.EOF)
			if !rec.clean {
				rec.err = err
			}
			break
		}
	}
	if rec.clean {
		c.CloseWrite()
	}
	copy(rec.sum[:], h.Sum(nil))
	if have == 8 {
		tg.mu.Lock()
		tg.recs[rec.id] = rec
		tg.mu.Unlock()
	}
}

// waitRecord waits for the target to finish with connection id.
func (tg *target) waitRecord(t *testing.T, id uint64, within time.Duration) *record {
	t.Helper()
	r := tg.lookup(id, within)
	if r == nil {
		t.Fatalf("target never finished connection %d", id)
	}
	return r
}

// lookup waits up to within for the target to finish with connection id;
// nil if it does not (it may never have seen the connection).
func (tg *target) lookup(id uint64, within time.Duration) *record {
	deadline := time.Now().Add(within)
	for {
		tg.mu.Lock()
		r := tg.recs[id]
		tg.mu.Unlock()
		if r != nil || time.Now().After(deadline) {
			return r
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// payload is connection id's stream: the id, then pseudo-random bytes.
func payload(id uint64, size int) []byte {
	b := make([]byte, size)
	binary.BigEndian.PutUint64(b, id)
	r := rand.NewChaCha8([32]byte{byte(id), byte(id >> 8), byte(id >> 16), 1})
	r.Read(b[8:])
	return b
}

// result is what a client saw.
type result struct {
	id   uint64
	sent []byte
	got  []byte // the echo, up to the first error
	sum  [32]byte
	n    int64
	err  error // nil after a complete, clean echo
}

// echo connects to addr, sends payload(id, size) while reading the echo,
// half-closes, and reads until the end. keep keeps the echoed bytes (else
// only their hash).
func echo(addr string, id uint64, size int, keep bool, timeout time.Duration) result {
	res := result{id: id, sent: payload(id, size)}
	c, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		res.err = err
		return res
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(timeout))
	wrote := make(chan error, 1)
	go func() {
		_, err := c.Write(res.sent)
		if err == nil {
			err = c.(*net.TCPConn).CloseWrite()
		}
		wrote <- err
	}()
	h := sha256.New()
	buf := make([]byte, 32<<10)
	for {
		n, err := c.Read(buf)
		h.Write(buf[:n])
		res.n += int64(n)
		if keep {
			res.got = append(res.got, buf[:n]...)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			res.err = err
			c.Close()
			break
		}
	}
	if werr := <-wrote; res.err == nil && werr != nil {
		res.err = werr
	}
	copy(res.sum[:], h.Sum(nil))
	if res.err == nil && res.n != int64(size) {
		res.err = io.ErrUnexpectedEOF
	}
	return res
}

// intact reports whether the echo came back complete and equal.
func (r result) intact() bool {
	return r.err == nil && r.n == int64(len(r.sent)) && r.sum == sha256.Sum256(r.sent)
}
