package main

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/pires/go-proxyproto"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMetrics(t *testing.T) {
	key, other := keyFile(t), keyFile(t)
	tg := echoTarget(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	metricsAddr := ln.Addr().String()
	ln.Close()
	_, laddr := serving(t, "listen", "-s", "127.0.0.1:0", "-t", tg.addr, "-k", key, "--metrics", metricsAddr)
	_, good := serving(t, "connect", "-s", "127.0.0.1:0", "-t", laddr, "-k", key)
	_, bad := serving(t, "connect", "-s", "127.0.0.1:0", "-t", laddr, "-k", other)

	msg := randomBytes(t, 12345)
	assert.Equal(t, msg, roundTrip(t, dial(t, good), msg))
	assert.Error(t, tryEcho(bad, "x"))

	var body string
	require.Eventually(t, func() bool {
		body = scrape(t, metricsAddr)
		return metric(body, `spipe_connections_total{mode="listen"}`) == 2 &&
			metric(body, `spipe_connections_open{mode="listen"}`) == 0
	}, 10*time.Second, 20*time.Millisecond, "%s", body)
	assert.Equal(t, 12345.0, metric(body, `spipe_bytes_total{direction="to_target",mode="listen"}`))
	assert.Equal(t, 12345.0, metric(body, `spipe_bytes_total{direction="from_target",mode="listen"}`))
	assert.Equal(t, 1.0, metric(body, `spipe_handshake_failures_total{mode="listen",reason="auth"}`))
	assert.Equal(t, 1.0, metric(body, `spipe_handshake_duration_seconds_count{mode="listen"}`))
}

// TestTamperedStream flips one bit of the encrypted stream in flight: the
// listener rejects the frame (one log line, reason tampered, a frame-error
// metric), the target never sees a byte of the bad frame and is reset, and
// the client is reset too rather than handed a clean end.
func TestTamperedStream(t *testing.T) {
	key := keyFile(t)
	received := make(chan int64, 1)
	tg := newTarget(t, func(c net.Conn) {
		n, _ := io.Copy(io.Discard, c)
		received <- n
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	metricsAddr := ln.Addr().String()
	ln.Close()
	listen, laddr := serving(t, "listen", "-s", "127.0.0.1:0", "-t", tg.addr, "-k", key, "--metrics", metricsAddr)
	evil := bitFlipper(t, laddr, 50_000)
	_, caddr := serving(t, "connect", "-s", "127.0.0.1:0", "-t", evil, "-k", key)

	c := dial(t, caddr)
	require.NoError(t, c.SetDeadline(time.Now().Add(20*time.Second)))
	msg := randomBytes(t, 200_000)
	go func() { c.Write(msg); c.CloseWrite() }()
	_, err = io.ReadAll(c)
	assert.ErrorIs(t, err, syscall.ECONNRESET)
	listen.waitLog(t, `level=WARN msg="connection failed" peer=\S+ stage=transfer reason=tampered`)
	assert.Less(t, <-received, int64(50_000), "target got bytes from the tampered frame or after it")
	require.Eventually(t, func() bool {
		return metric(scrape(t, metricsAddr), `spipe_frame_errors_total{mode="listen",reason="tampered"}`) == 1
	}, 10*time.Second, 20*time.Millisecond)
}

// bitFlipper is a TCP proxy to addr that flips one bit of the client's
// stream at the given offset.
func bitFlipper(t *testing.T, addr string, offset int64) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			u, err := net.Dial("tcp", addr)
			if err != nil {
				c.Close()
				continue
			}
			go func() {
				io.Copy(c, u)
				c.Close()
			}()
			go func() {
				var seen int64
				buf := make([]byte, 4096)
				for {
					n, err := c.Read(buf)
					if n > 0 {
						if seen <= offset && offset < seen+int64(n) {
							buf[offset-seen] ^= 0x10
						}
						seen += int64(n)
						if _, werr := u.Write(buf[:n]); werr != nil {
							break
						}
					}
					if err != nil {
						break
					}
				}
				u.Close()
			}()
		}
	}()
	return ln.Addr().String()
}

func scrape(t *testing.T, addr string) string {
	resp, err := http.Get("http://" + addr + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return string(b)
}

// metric returns a sample's value from a Prometheus text page, -1 if absent.
func metric(body, name string) float64 {
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + ` (\S+)$`).FindStringSubmatch(body)
	if m == nil {
		return -1
	}
	v, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		return -1
	}
	return v
}

// TestProxyProtocol: with --proxy-protocol the target first receives a
// PROXY v2 header naming the address the encrypted connection came from.
func TestProxyProtocol(t *testing.T) {
	key := keyFile(t)
	headers := make(chan *proxyproto.Header, 1)
	tg := newTarget(t, func(c net.Conn) {
		r := bufio.NewReader(c)
		h, err := proxyproto.Read(r)
		if err != nil {
			headers <- nil
			return
		}
		headers <- h
		io.Copy(c, r)
		c.(*net.TCPConn).CloseWrite()
	})
	_, laddr := serving(t, "listen", "-s", "127.0.0.1:0", "-t", tg.addr, "-k", key, "--proxy-protocol")
	connect, caddr := serving(t, "connect", "-s", "127.0.0.1:0", "-t", laddr, "-k", key, "--log-level", "debug")
	assert.Equal(t, []byte("through"), roundTrip(t, dial(t, caddr), []byte("through")))
	h := <-headers
	require.NotNil(t, h, "no valid PROXY header")
	assert.Equal(t, byte(2), h.Version)
	assert.Equal(t, proxyproto.PROXY, h.Command)
	assert.Equal(t, proxyproto.TCPv4, h.TransportProtocol)
	src, dst, ok := h.TCPAddrs()
	require.True(t, ok)
	assert.Equal(t, laddr, dst.String(), "destination is the address spipe listen accepted on")
	// The source is connect's outgoing socket: it is not logged, but it is
	// a loopback address with a real port.
	assert.True(t, src.IP.IsLoopback())
	assert.NotZero(t, src.Port)
	_ = connect
}
