package service_test

import (
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/spipe-dev/spipe/internal/service"
	"github.com/spipe-dev/spipe/internal/testutil/pipetest"
)

func TestMetrics(t *testing.T) {
	key, other := pipetest.KeyFile(t), pipetest.KeyFile(t)
	tg := pipetest.EchoTarget(t)
	listen := pipetest.Start(t, service.Listen, "127.0.0.1:0", tg.Addr, key, pipetest.WithMetrics)
	good := pipetest.Start(t, service.Connect, "127.0.0.1:0", listen.Addr, key, nil)
	bad := pipetest.Start(t, service.Connect, "127.0.0.1:0", listen.Addr, other, nil)

	msg := pipetest.RandomBytes(12345)
	assert.Equal(t, msg, pipetest.RoundTrip(t, pipetest.Dial(t, good.Addr), msg))
	assert.Error(t, pipetest.TryEcho(bad.Addr, "x"))

	var body string
	require.Eventually(t, func() bool {
		body = pipetest.Scrape(t, listen.MetricsAddr())
		return pipetest.Metric(body, `spipe_connections_total{mode="listen"}`) == 2 &&
			pipetest.Metric(body, `spipe_connections_open{mode="listen"}`) == 0
	}, 10*time.Second, 20*time.Millisecond, "%s", body)
	assert.Equal(t, 12345.0, pipetest.Metric(body, `spipe_bytes_total{direction="to_target",mode="listen"}`))
	assert.Equal(t, 12345.0, pipetest.Metric(body, `spipe_bytes_total{direction="from_target",mode="listen"}`))
	assert.Equal(t, 1.0, pipetest.Metric(body, `spipe_handshake_failures_total{mode="listen",reason="auth"}`))
	assert.Equal(t, 1.0, pipetest.Metric(body, `spipe_handshake_duration_seconds_count{mode="listen"}`))
}

// TestTamperedStream flips one bit of the encrypted stream in flight: the
// listener rejects the frame (one log line, reason tampered, a frame-error
// metric), the target never sees a byte of the bad frame and is reset, and
// the client is reset too rather than handed a clean end.
func TestTamperedStream(t *testing.T) {
	key := pipetest.KeyFile(t)
	received := make(chan int64, 1)
	tg := pipetest.NewTarget(t, func(c net.Conn) {
		n, _ := io.Copy(io.Discard, c)
		received <- n
	})
	listen := pipetest.Start(t, service.Listen, "127.0.0.1:0", tg.Addr, key, pipetest.WithMetrics)
	evil := bitFlipper(t, listen.Addr, 50_000)
	connect := pipetest.Start(t, service.Connect, "127.0.0.1:0", evil, key, nil)

	c := pipetest.Dial(t, connect.Addr)
	require.NoError(t, c.SetDeadline(time.Now().Add(20*time.Second)))
	msg := pipetest.RandomBytes(200_000)
	go func() { c.Write(msg); c.CloseWrite() }()
	_, err := io.ReadAll(c)
	assert.ErrorIs(t, err, syscall.ECONNRESET)
	listen.Log.Wait(t, `level=WARN msg="connection failed" peer=\S+ stage=transfer reason=tampered`, nil)
	assert.Less(t, <-received, int64(50_000), "target got bytes from the tampered frame or after it")
	require.Eventually(t, func() bool {
		return listen.Metric(t, `spipe_frame_errors_total{mode="listen",reason="tampered"}`) == 1
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

func TestPidfile(t *testing.T) {
	key := pipetest.KeyFile(t)
	pidfile := filepath.Join(t.TempDir(), "spipe.pid")
	tg := pipetest.EchoTarget(t)
	s := pipetest.Start(t, service.Listen, "127.0.0.1:0", tg.Addr, key, func(o *service.Options) { o.PidFile = pidfile })
	b, err := os.ReadFile(pidfile)
	require.NoError(t, err)
	assert.Equal(t, strconv.Itoa(os.Getpid())+"\n", string(b))
	s.Shutdown()
	assert.NoError(t, s.Wait(t, 10*time.Second))
	assert.NoFileExists(t, pidfile)
}
