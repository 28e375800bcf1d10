package service_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/spipe-dev/spipe/internal/service"
	"github.com/spipe-dev/spipe/internal/testutil/pipetest"
)

// tunnel starts a listen forwarding to target and a connect to it, plain
// or multiplexed, both serving metrics; tweak (if not nil) adjusts both.
func tunnel(t *testing.T, target, key string, muxed bool, tweak func(*service.Options)) (listen, connect *pipetest.Service) {
	t.Helper()
	opts := func(o *service.Options) {
		pipetest.WithMetrics(o)
		if tweak != nil {
			tweak(o)
		}
	}
	listen = pipetest.Start(t, service.Listen, "127.0.0.1:0", target, key, opts)
	if muxed {
		return listen, pipetest.MuxConnect(t, listen.Addr, key, opts)
	}
	return listen, pipetest.Start(t, service.Connect, "127.0.0.1:0", listen.Addr, key, opts)
}

// outcomes scrapes s and returns its connection ends by how, and its
// failures ("handshake:auth", "carrier_open:dial:refused", ...), leaving
// out series at zero.
func outcomes(t *testing.T, s *pipetest.Service) (ends, failures map[string]float64) {
	t.Helper()
	ends, failures = map[string]float64{}, map[string]float64{}
	sc := bufio.NewScanner(strings.NewReader(pipetest.Scrape(t, s.MetricsAddr())))
	for sc.Scan() {
		line := sc.Text()
		name, rest, ok := strings.Cut(line, "{")
		if !ok {
			continue
		}
		labels, value, _ := strings.Cut(rest, "} ")
		v, err := strconv.ParseFloat(value, 64)
		require.NoError(t, err, line)
		if v == 0 {
			continue
		}
		switch {
		case name == "spipe_connection_ends_total":
			ends[label(labels, "how")] = v
		case strings.HasSuffix(name, "_failures_total"):
			kind := strings.TrimSuffix(strings.TrimPrefix(name, "spipe_"), "_failures_total")
			if stage := label(labels, "stage"); stage != "" {
				kind += ":" + stage
			}
			failures[kind+":"+label(labels, "reason")] = v
		}
	}
	return ends, failures
}

// label is one label's value in a sample's label text.
func label(labels, name string) string {
	for l := range strings.SplitSeq(labels, ",") {
		if k, v, _ := strings.Cut(l, "="); k == name {
			return strings.Trim(v, `"`)
		}
	}
	return ""
}

// waitOutcomes waits until s has counted n connections (or streams) as
// ended or failed, and returns them.
func waitOutcomes(t *testing.T, s *pipetest.Service, n int) (ends, failures map[string]float64) {
	t.Helper()
	total := func() float64 {
		sum := 0.0
		for k, v := range failures {
			if !strings.HasPrefix(k, "carrier:") && !strings.HasPrefix(k, "carrier_open:") { // a carrier is not a connection
				sum += v
			}
		}
		for _, v := range ends {
			sum += v
		}
		return sum
	}
	deadline := time.Now().Add(20 * time.Second)
	for ends, failures = outcomes(t, s); total() < float64(n); ends, failures = outcomes(t, s) {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d connections accounted for (ends %v, failures %v); log:\n%s", int(total()), n, ends, failures, s.Log.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	return ends, failures
}

// quiet asserts that s logged nothing at WARN or above and no failure.
func quiet(t *testing.T, s *pipetest.Service, name string) {
	t.Helper()
	assert.Zero(t, s.Log.Count("level=WARN")+s.Log.Count("level=ERROR"), "%s logged a warning:\n%s", name, s.Log.String())
	assert.Zero(t, s.Log.Count(`msg="connection failed"`), "%s logged a failure:\n%s", name, s.Log.String())
}

// endless writes to c until a write fails.
func endless(c net.Conn) {
	buf := make([]byte, 64<<10)
	for {
		if _, err := c.Write(buf); err != nil {
			return
		}
	}
}

// answerEndlessly reads a 3-byte request, then answers it without end.
func answerEndlessly(c net.Conn) {
	if _, err := io.ReadFull(c, make([]byte, 3)); err == nil {
		endless(c)
	}
}

// sslRequest is PostgreSQL's SSLRequest message: length 8, code 80877103.
var sslRequest = []byte{0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f}

// TestSidesLeavingAreEnds: however a client or a target leaves (a reset,
// a close before the answer was read, a FIN then a reset, PostgreSQL's
// SSLRequest exchange with either side resetting as it closes), the
// connection is an end at both spipes, every time, through a plain and a
// multiplexed tunnel: counted in spipe_connection_ends_total, never in a
// failure series, and logged at no level above DEBUG.
func TestSidesLeavingAreEnds(t *testing.T) {
	const n = 10
	for _, tc := range []struct {
		name   string
		target func(net.Conn)
		client func(*net.TCPConn)
		how    string
	}{
		{
			name:   "both close in order",
			target: func(c net.Conn) { io.Copy(c, c); c.(*net.TCPConn).CloseWrite() },
			client: func(c *net.TCPConn) {
				c.Write([]byte("req"))
				c.CloseWrite()
				io.Copy(io.Discard, c)
			},
			how: "closed",
		},
		{
			name:   "client resets while the answer comes",
			target: answerEndlessly,
			client: func(c *net.TCPConn) {
				c.Write([]byte("req"))
				io.ReadFull(c, make([]byte, 1))
				c.SetLinger(0)
			},
			how: "reset",
		},
		{
			name:   "client closes after its request",
			target: answerEndlessly,
			client: func(c *net.TCPConn) { c.Write([]byte("req")) },
			how:    "reset",
		},
		{
			name: "client sends its FIN, then resets",
			target: func(c net.Conn) {
				if _, err := io.Copy(io.Discard, c); err == nil {
					endless(c)
				}
			},
			client: func(c *net.TCPConn) {
				c.Write([]byte("req"))
				c.CloseWrite()
				io.ReadFull(c, make([]byte, 1))
				c.SetLinger(0)
			},
			how: "reset",
		},
		{
			// libpq's sslmode=prefer against a server with ssl=on: the
			// server says 'S', and closes its socket with the client's
			// last message (TLS close_notify) unread, which is a reset.
			name: "PostgreSQL SSLRequest answered S, the server resets as it closes",
			target: func(c net.Conn) {
				if _, err := io.ReadFull(c, make([]byte, len(sslRequest))); err != nil {
					return
				}
				c.Write([]byte{'S'})
				io.ReadFull(c, make([]byte, 1)) // and leaves the rest unread
			},
			client: func(c *net.TCPConn) {
				c.Write(sslRequest)
				io.ReadFull(c, make([]byte, 1))
				c.Write([]byte("X\x00\x00\x00\x04 and a close_notify"))
				io.Copy(io.Discard, c)
			},
			how: "reset",
		},
		{
			name: "PostgreSQL SSLRequest answered N, the client resets",
			target: func(c net.Conn) {
				if _, err := io.ReadFull(c, make([]byte, len(sslRequest))); err != nil {
					return
				}
				c.Write([]byte{'N'})
				io.Copy(io.Discard, c)
			},
			client: func(c *net.TCPConn) {
				c.Write(sslRequest)
				io.ReadFull(c, make([]byte, 1))
				c.SetLinger(0)
			},
			how: "reset",
		},
		{
			name: "target resets mid-answer",
			target: func(c net.Conn) {
				if _, err := io.ReadFull(c, make([]byte, 3)); err == nil {
					c.Write(make([]byte, 100_000))
					c.(*net.TCPConn).SetLinger(0)
				}
			},
			client: func(c *net.TCPConn) {
				c.Write([]byte("req"))
				io.Copy(io.Discard, c)
			},
			how: "reset",
		},
	} {
		for _, muxed := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s mux=%v", tc.name, muxed), func(t *testing.T) {
				key := pipetest.KeyFile(t)
				tg := pipetest.NewTarget(t, tc.target)
				listen, connect := tunnel(t, tg.Addr, key, muxed, nil)
				for range n {
					c := pipetest.Dial(t, connect.Addr)
					require.NoError(t, c.SetDeadline(time.Now().Add(20*time.Second)))
					tc.client(c)
					c.Close()
				}
				want := map[string]float64{tc.how: n}
				for _, s := range []*pipetest.Service{listen, connect} {
					ends, failures := waitOutcomes(t, s, n)
					name := map[*pipetest.Service]string{listen: "listen", connect: "connect"}[s]
					assert.Equal(t, want, ends, "%s: ends", name)
					assert.Empty(t, failures, "%s: failures", name)
					quiet(t, s, name)
				}
			})
		}
	}
}

// TestTargetRefusingIsOneFailure: a target that refuses is a dial
// failure where it is dialled (the listener: one WARN line per source at
// most five times a minute, every one counted), and the same end at the
// connect every time: its connection was reset. (Three curl calls once
// gave connect two INFO lines with reason=reset and one WARN with
// reason=other.)
func TestTargetRefusingIsOneFailure(t *testing.T) {
	const n = 12
	for _, muxed := range []bool{false, true} {
		t.Run(fmt.Sprintf("mux=%v", muxed), func(t *testing.T) {
			key := pipetest.KeyFile(t)
			listen, connect := tunnel(t, pipetest.FreeAddr(t), key, muxed, nil)
			for range n {
				// The reset may come so quickly that the dial reports it.
				c, err := net.DialTimeout("tcp", connect.Addr, 5*time.Second)
				if err != nil {
					continue
				}
				require.NoError(t, c.SetDeadline(time.Now().Add(20*time.Second)))
				c.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
				io.Copy(io.Discard, c)
				c.Close()
			}
			ends, failures := waitOutcomes(t, listen, n)
			assert.Empty(t, ends, "listen: ends")
			assert.Equal(t, map[string]float64{"dial:refused": n}, failures, "listen: failures")
			assert.Equal(t, 5, listen.Log.Count(`level=WARN msg="connection failed"`, "stage=dial reason=refused"), listen.Log.String())
			ends, failures = waitOutcomes(t, connect, n)
			assert.Equal(t, map[string]float64{"reset": n}, ends, "connect: ends")
			assert.Empty(t, failures, "connect: failures")
			quiet(t, connect, "connect")
		})
	}
}

// TestShutdownEnds: connections cut at the end of a listener's grace
// period ended with its shutdown, and at the connect they were reset by
// it: ends at both, failures at neither.
func TestShutdownEnds(t *testing.T) {
	for _, muxed := range []bool{false, true} {
		t.Run(fmt.Sprintf("mux=%v", muxed), func(t *testing.T) {
			key := pipetest.KeyFile(t)
			tg := pipetest.NewTarget(t, func(c net.Conn) { io.Copy(io.Discard, c) }) // never answers
			listen, connect := tunnel(t, tg.Addr, key, muxed, func(o *service.Options) { o.ShutdownTimeout = 300 * time.Millisecond })
			c := pipetest.Dial(t, connect.Addr)
			_, err := c.Write([]byte("hang"))
			require.NoError(t, err)
			require.Eventually(t, func() bool { return tg.Accepts.Load() == 1 }, 10*time.Second, 10*time.Millisecond)
			listen.Shutdown()
			assert.NoError(t, listen.Wait(t, 10*time.Second))
			listen.Log.Wait(t, `level=DEBUG msg="connection closed" .* end=shutdown`, nil)
			assert.Zero(t, listen.Log.Count(`msg="connection failed"`), listen.Log.String())
			ends, failures := waitOutcomes(t, connect, 1)
			assert.Equal(t, map[string]float64{"reset": 1}, ends)
			// A connect --mux whose listener is gone fails to open its
			// next carrier: the carrier's failure, no connection's.
			maps.DeleteFunc(failures, func(k string, _ float64) bool { return strings.HasPrefix(k, "carrier_open:dial:") })
			assert.Empty(t, failures)
		})
	}
}

// TestStdioEnds: a stdio connection (ssh's ProxyCommand) whose listener
// resets it, or whose stdout's reader goes away, ended so: its debug line
// says how, and no failure is logged. Run still returns the error, which
// the command prints for the user.
func TestStdioEnds(t *testing.T) {
	key := pipetest.KeyFile(t)
	down := pipetest.Start(t, service.Listen, "127.0.0.1:0", pipetest.FreeAddr(t), key, nil)
	c := stdio(t, down.Addr, key, strings.NewReader("SSH-2.0-client\r\n"), io.Discard)
	err := c.Wait(t, 30*time.Second)
	require.Error(t, err)
	// The reset reaches whichever call meets it first: a read (ECONNRESET),
	// or, once stdin has ended, the close-write after it (ENOTCONN).
	assert.True(t, errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ENOTCONN), "%v", err)
	c.Log.Wait(t, `level=DEBUG msg="connection closed" peer=stdio .* end=reset`, nil)
	assert.Zero(t, c.Log.Count(`msg="connection failed"`), c.Log.String())

	// The reader of stdout (ssh) goes away while data comes.
	tg := pipetest.NewTarget(t, endless)
	listen := pipetest.Start(t, service.Listen, "127.0.0.1:0", tg.Addr, key, nil)
	stdinR, stdinW := io.Pipe()
	defer stdinW.Close()
	stdoutR, stdoutW := io.Pipe()
	c = pipetest.Start(t, service.Connect, "", listen.Addr, key, func(o *service.Options) {
		o.Stdin, o.Stdout = stdinR, stdoutW
	})
	_, err = io.ReadFull(stdoutR, make([]byte, 1000))
	require.NoError(t, err)
	stdoutR.Close()
	require.Error(t, c.Wait(t, 30*time.Second))
	c.Log.Wait(t, `level=DEBUG msg="connection closed" peer=stdio .* end=reset`, nil)
	assert.Zero(t, c.Log.Count(`msg="connection failed"`), c.Log.String())
}

// TestOutcomesAddUp: every connection is counted once, as an end or as a
// failure, so the ends and failures add up to spipe_connections_total.
func TestOutcomesAddUp(t *testing.T) {
	key, other := pipetest.KeyFile(t), pipetest.KeyFile(t)
	tg := pipetest.EchoTarget(t)
	listen, connect := tunnel(t, tg.Addr, key, false, nil)
	wrong := pipetest.Start(t, service.Connect, "127.0.0.1:0", listen.Addr, other, nil)
	for i := range 5 {
		msg := []byte(fmt.Sprint("echo ", i))
		assert.Equal(t, msg, pipetest.RoundTrip(t, pipetest.Dial(t, connect.Addr), msg))
		assert.Error(t, pipetest.TryEcho(wrong.Addr, "x"))
	}
	ends, failures := waitOutcomes(t, listen, 10)
	assert.Equal(t, map[string]float64{"closed": 5}, ends)
	assert.Equal(t, map[string]float64{"handshake:auth": 5}, failures)
	counted := 0.0
	for v := range maps.Values(ends) {
		counted += v
	}
	for v := range maps.Values(failures) {
		counted += v
	}
	assert.Equal(t, pipetest.Metric(pipetest.Scrape(t, listen.MetricsAddr()), `spipe_connections_total{mode="listen"}`), counted)
}

// TestWaitForAPlaceIsBounded: a connection, or a stream of a carrier,
// that finds the listener's --max-conns places taken waits for one at most
// --max-conns-wait, then is reset (the client sees a reset, not a hang),
// logged and counted under reason="limit"; the connection holding the
// place goes on.
func TestWaitForAPlaceIsBounded(t *testing.T) {
	for _, muxed := range []bool{false, true} {
		t.Run(fmt.Sprintf("mux=%v", muxed), func(t *testing.T) {
			key := pipetest.KeyFile(t)
			tg := pipetest.EchoTarget(t)
			listen := pipetest.Start(t, service.Listen, "127.0.0.1:0", tg.Addr, key, func(o *service.Options) {
				pipetest.WithMetrics(o)
				o.MaxConns = 1
				o.MaxConnsWait = 300 * time.Millisecond
			})
			var connect *pipetest.Service
			if muxed {
				connect = pipetest.MuxConnect(t, listen.Addr, key, nil)
			} else {
				connect = pipetest.Start(t, service.Connect, "127.0.0.1:0", listen.Addr, key, nil)
			}
			holder := pipetest.Dial(t, connect.Addr)
			pipetest.EchoOnce(t, holder, "holds the place")

			c := pipetest.Dial(t, connect.Addr)
			_, err := c.Write([]byte("waits"))
			require.NoError(t, err)
			require.NoError(t, c.SetReadDeadline(time.Now().Add(10*time.Second)))
			_, err = io.ReadAll(c)
			assert.ErrorIs(t, err, syscall.ECONNRESET, "the waiting client was not reset")
			listen.Log.Wait(t, `level=WARN msg="connection failed" peer=\S+ stage=admission reason=limit err="no connection place free in time: all 1 taken for 300ms`, nil)
			_, failures := waitOutcomes(t, listen, 1)
			assert.Equal(t, map[string]float64{"admission:limit": 1}, failures)
			assert.Equal(t, 0.0, listen.Metric(t, `spipe_connections_waiting{mode="listen"}`))
			pipetest.EchoOnce(t, holder, "still holds it")
		})
	}
}
