package pipetest

import (
	"bufio"
	"crypto/rand"
	"io"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Target is an in-test server standing for the program behind spipe.
type Target struct {
	Addr string
	// Accepts counts the connections it accepted.
	Accepts atomic.Int32
}

// EchoTarget echoes each connection's bytes back and half-closes when the
// client does, so both directions of half-close are exercised.
func EchoTarget(t testing.TB) *Target {
	return NewTarget(t, func(c net.Conn) {
		io.Copy(c, c)
		c.(*net.TCPConn).CloseWrite()
	})
}

// NewTarget serves each connection to a fresh 127.0.0.1 port with serve,
// then closes it. The test's cleanup stops it and waits for serve calls
// to return.
func NewTarget(t testing.TB, serve func(net.Conn)) *Target {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	tg := &Target{Addr: ln.Addr().String()}
	var wg sync.WaitGroup
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			tg.Accepts.Add(1)
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				serve(c)
			}()
		}
	}()
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	return tg
}

// FreeAddr returns a 127.0.0.1 address nothing listens on (it did a moment
// ago, so another process is unlikely to have taken it).
func FreeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// RandomBytes returns n random bytes.
func RandomBytes(n int) []byte {
	b := make([]byte, n)
	rand.Read(b)
	return b
}

// Dial connects to addr; the test's cleanup closes the connection.
func Dial(t testing.TB, addr string) *net.TCPConn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c.(*net.TCPConn)
}

// RoundTrip sends msg, half-closes and returns everything read back.
func RoundTrip(t testing.TB, c *net.TCPConn, msg []byte) []byte {
	t.Helper()
	require.NoError(t, c.SetDeadline(time.Now().Add(30*time.Second)))
	errc := make(chan error, 1)
	go func() {
		_, err := c.Write(msg)
		if err == nil {
			err = c.CloseWrite()
		}
		errc <- err
	}()
	got, err := io.ReadAll(c)
	require.NoError(t, err)
	require.NoError(t, <-errc)
	return got
}

// TryEcho reports whether msg comes back through a connection to addr. A
// refused client may be reset so fast that even the dial fails.
func TryEcho(addr, msg string) error {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write([]byte(msg)); err != nil {
		return err
	}
	line, err := bufio.NewReader(c).Peek(len(msg))
	if err != nil {
		return err
	}
	if string(line) != msg {
		return io.ErrUnexpectedEOF
	}
	return nil
}

// EchoOnce writes msg on c and requires it back.
func EchoOnce(t testing.TB, c net.Conn, msg string) {
	t.Helper()
	require.NoError(t, c.SetDeadline(time.Now().Add(10*time.Second)))
	EchoOver(t, c, c, msg)
}

// EchoOver writes msg to w and requires it back from r: an echo through a
// stdio connection's two pipes, or through one socket.
func EchoOver(t testing.TB, w io.Writer, r io.Reader, msg string) {
	t.Helper()
	errc := make(chan error, 1)
	go func() { _, err := w.Write([]byte(msg)); errc <- err }() // a pipe's Write waits for the reader
	buf := make([]byte, len(msg))
	_, err := io.ReadFull(r, buf)
	require.NoError(t, err)
	require.NoError(t, <-errc)
	require.Equal(t, msg, string(buf))
}

// RequireNoAnswer checks that c has nothing to read for half a second.
func RequireNoAnswer(t testing.TB, c net.Conn, why string) {
	t.Helper()
	require.NoError(t, c.SetReadDeadline(time.Now().Add(500*time.Millisecond)))
	_, err := c.Read(make([]byte, 1))
	require.Error(t, err, why)
}

// RequireAnswer reads want from c, waiting up to 10 s.
func RequireAnswer(t testing.TB, c net.Conn, want, why string) {
	t.Helper()
	require.NoError(t, c.SetReadDeadline(time.Now().Add(10*time.Second)))
	got := make([]byte, len(want))
	_, err := io.ReadFull(c, got)
	require.NoError(t, err, why)
	assert.Equal(t, want, string(got))
}

// Scrape fetches the Prometheus text page served at addr.
func Scrape(t testing.TB, addr string) string {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return string(b)
}

// Metric returns a sample's value from a Prometheus text page, -1 if the
// series is absent.
func Metric(body, series string) float64 {
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(series) + ` (\S+)$`).FindStringSubmatch(body)
	if m == nil {
		return -1
	}
	v, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		return -1
	}
	return v
}

// HeldEchoTarget is an echo target that holds every answer until release
// is called: with it a test keeps a transfer in flight while it does
// something else (a shutdown, a reload).
func HeldEchoTarget(t testing.TB) (tg *Target, release func()) {
	held := make(chan struct{})
	var once sync.Once
	tg = NewTarget(t, func(c net.Conn) {
		<-held
		io.Copy(c, c)
		c.(*net.TCPConn).CloseWrite()
	})
	release = func() { once.Do(func() { close(held) }) }
	t.Cleanup(release)
	return tg, release
}

// Transfer is an echo of Sent started through a pipe; Got receives what
// came back once the connection ends (short if it was cut).
type Transfer struct {
	Sent []byte
	Got  <-chan []byte
}

// StartTransfer connects to addr and echoes n random bytes through it in
// the background, returning once tg (the pipe's target) has accepted the
// connection.
func StartTransfer(t testing.TB, addr string, tg *Target, n int) Transfer {
	t.Helper()
	before := tg.Accepts.Load()
	c := Dial(t, addr)
	msg := RandomBytes(n)
	got := make(chan []byte, 1)
	require.NoError(t, c.SetDeadline(time.Now().Add(30*time.Second)))
	go func() {
		go func() { c.Write(msg); c.CloseWrite() }()
		b, _ := io.ReadAll(c) // the caller compares: a short read fails
		got <- b
	}()
	require.Eventually(t, func() bool { return tg.Accepts.Load() > before }, 10*time.Second, 10*time.Millisecond)
	return Transfer{Sent: msg, Got: got}
}
