package main

import (
	"bytes"
	"io"
	"net"
	"os"
	"path/filepath"
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

// The tests here run the command as a process: what they check (signals,
// exit status, what reaches stderr) belongs to the process. What the
// service does with a connection is tested in internal/service.

// TestSIGTERMDrains sends SIGTERM to both ends while a transfer is in
// flight: no new connection is accepted, the open one completes intact
// and both processes exit 0.
func TestSIGTERMDrains(t *testing.T) {
	key := pipetest.KeyFile(t)
	tg, release := pipetest.HeldEchoTarget(t)
	addr, listen, connect := pair(t, tg.Addr, key, "--shutdown-timeout", "20s")
	tr := pipetest.StartTransfer(t, addr, tg, 2<<20)

	listen.signal(t, syscall.SIGTERM)
	connect.signal(t, syscall.SIGTERM)
	listen.waitLog(t, `msg="shutting down: waiting for open connections" open=1`)
	connect.waitLog(t, `msg="shutting down: waiting for open connections" open=1`)
	_, err := net.DialTimeout("tcp", addr, time.Second)
	assert.Error(t, err, "connect still accepting after SIGTERM")

	release()
	assert.True(t, bytes.Equal(tr.Sent, <-tr.Got), "transfer in flight not completed intact")
	assert.Equal(t, 0, listen.wait(t, 10*time.Second))
	assert.Equal(t, 0, connect.wait(t, 10*time.Second))
}

// TestSIGINTGraceExpires: on SIGINT a connection that outlives the grace
// period is closed and the process still exits 0.
func TestSIGINTGraceExpires(t *testing.T) {
	key := pipetest.KeyFile(t)
	tg := pipetest.NewTarget(t, func(c net.Conn) { io.Copy(io.Discard, c) }) // never answers
	listen, laddr := serving(t, "listen", "-s", "127.0.0.1:0", "-t", tg.Addr, "-k", key, "--shutdown-timeout", "300ms")
	connect := pipetest.Start(t, service.Connect, "127.0.0.1:0", laddr, key, nil)
	c := pipetest.Dial(t, connect.Addr)
	_, err := c.Write([]byte("hang"))
	require.NoError(t, err)
	require.Eventually(t, func() bool { return tg.Accepts.Load() == 1 }, 10*time.Second, 10*time.Millisecond)
	listen.signal(t, syscall.SIGINT)
	assert.Equal(t, 0, listen.wait(t, 10*time.Second))
	listen.waitLog(t, `grace period over, closing connections`)
	require.NoError(t, c.SetReadDeadline(time.Now().Add(10*time.Second)))
	_, err = io.ReadAll(c)
	assert.ErrorIs(t, err, syscall.ECONNRESET)
}

// TestSecondSignalStopsAtOnce: a second SIGTERM (or SIGINT) during the
// shutdown ends the drain and the grace period at once: the process
// exits 0 long before either would have ended, and its open connection
// is reset.
func TestSecondSignalStopsAtOnce(t *testing.T) {
	for _, sigs := range [][2]syscall.Signal{{syscall.SIGTERM, syscall.SIGTERM}, {syscall.SIGINT, syscall.SIGINT}} {
		t.Run(sigs[0].String(), func(t *testing.T) {
			key := pipetest.KeyFile(t)
			tg := pipetest.NewTarget(t, func(c net.Conn) { io.Copy(io.Discard, c) }) // never answers
			listen, laddr := serving(t, "listen", "-s", "127.0.0.1:0", "-t", tg.Addr, "-k", key,
				"--metrics", "127.0.0.1:0", "--drain-delay", "1m", "--shutdown-timeout", "1m")
			connect := pipetest.Start(t, service.Connect, "127.0.0.1:0", laddr, key, nil)
			c := pipetest.Dial(t, connect.Addr)
			_, err := c.Write([]byte("hang"))
			require.NoError(t, err)
			require.Eventually(t, func() bool { return tg.Accepts.Load() == 1 }, 10*time.Second, 10*time.Millisecond)
			listen.signal(t, sigs[0])
			listen.waitLog(t, `msg="draining: /healthz answers 503`)
			listen.signal(t, sigs[1])
			assert.Equal(t, 0, listen.wait(t, 10*time.Second))
			listen.waitLog(t, `level=WARN msg="stopping at once: open connections are closed"`)
			require.NoError(t, c.SetReadDeadline(time.Now().Add(10*time.Second)))
			_, err = io.ReadAll(c)
			assert.ErrorIs(t, err, syscall.ECONNRESET)
		})
	}
}

// TestSIGHUPReloadsKeys: SIGHUP makes a listen re-read its key files.
func TestSIGHUPReloadsKeys(t *testing.T) {
	oldKey, newKey := pipetest.KeyFile(t), pipetest.KeyFile(t)
	serverKey := filepath.Join(t.TempDir(), "server.key")
	b, err := os.ReadFile(oldKey)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(serverKey, b, 0o600))
	tg := pipetest.EchoTarget(t)
	listen, laddr := serving(t, "listen", "-s", "127.0.0.1:0", "-t", tg.Addr, "-k", serverKey)
	newConnect := pipetest.Start(t, service.Connect, "127.0.0.1:0", laddr, newKey, nil)
	require.Error(t, pipetest.TryEcho(newConnect.Addr, "new"), "new key admitted before the reload")

	b, err = os.ReadFile(newKey)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(serverKey, b, 0o600))
	listen.signal(t, syscall.SIGHUP)
	listen.waitLog(t, `msg="keys reloaded" keys=1`)
	assert.NoError(t, pipetest.TryEcho(newConnect.Addr, "new"), "new key refused after the reload")
}

// TestPidfileRemovedOnSIGTERM: the PID file names the process and is gone
// once SIGTERM has made it exit 0.
func TestPidfileRemovedOnSIGTERM(t *testing.T) {
	key := pipetest.KeyFile(t)
	pidfile := filepath.Join(t.TempDir(), "spipe.pid")
	p, _ := serving(t, "listen", "-s", "127.0.0.1:0", "-t", "127.0.0.1:9", "-k", key, "--pidfile", pidfile)
	b, err := os.ReadFile(pidfile)
	require.NoError(t, err)
	assert.Equal(t, strconv.Itoa(p.cmd.Process.Pid)+"\n", string(b))
	p.signal(t, syscall.SIGTERM)
	assert.Equal(t, 0, p.wait(t, 10*time.Second))
	assert.NoFileExists(t, pidfile)
}

// TestJSONLogs: --log-format json makes every log line a JSON object.
func TestJSONLogs(t *testing.T) {
	key := pipetest.KeyFile(t)
	p := start(t, nil, "listen", "-s", "127.0.0.1:0", "-t", "127.0.0.1:9", "-k", key, "--log-format", "json")
	p.waitLog(t, `\{"time":"[^"]+","level":"INFO","msg":"serving","mode":"listen","source":"127\.0\.0\.1:\d+"`)
}

// TestStdio runs connect as ssh runs a ProxyCommand: the connection is
// the process's stdin and stdout, and the process exits 0 when it ends.
func TestStdio(t *testing.T) {
	key := pipetest.KeyFile(t)
	tg := pipetest.EchoTarget(t)
	listen := pipetest.Start(t, service.Listen, "127.0.0.1:0", tg.Addr, key, nil)
	msg := pipetest.RandomBytes(1 << 20)
	cmd := command("connect", "-t", listen.Addr, "-k", key)
	cmd.Stdin = bytes.NewReader(msg) // EOF on stdin is the client's half-close
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	require.NoError(t, cmd.Run(), errb.String())
	assert.True(t, bytes.Equal(msg, out.Bytes()), "stdout differs from stdin (%d of %d bytes)", out.Len(), len(msg))
}

// TestStdioFailureExitsNonZero: a stdio connection that fails exits 1
// with its error on one line (no log line repeating it), the likely causes
// of a refused handshake listed, and the target is never dialled for a
// client with the wrong key.
func TestStdioFailureExitsNonZero(t *testing.T) {
	key, other := pipetest.KeyFile(t), pipetest.KeyFile(t)
	tg := pipetest.EchoTarget(t)
	listen := pipetest.Start(t, service.Listen, "127.0.0.1:0", tg.Addr, key, nil)
	cmd := command("connect", "-t", listen.Addr, "-k", other)
	cmd.Stdin = strings.NewReader("hello")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.Error(t, cmd.Run())
	assert.Equal(t, exitFailure, cmd.ProcessState.ExitCode())
	assert.Empty(t, stdout.String())
	assert.True(t, strings.HasPrefix(stderr.String(), "spipe: connection to "+listen.Addr+": handshake: server closed the connection during the handshake"+
		" (wrong key or context, no cipher suite in common"), "%q", stderr.String())
	assert.Equal(t, 1, strings.Count(stderr.String(), "\n"), "one line: %q", stderr.String())
	assert.Contains(t, stderr.String(), "to check: `spipe key fingerprint FILE` and --context at both ends, --cipher")
	assert.Equal(t, int32(0), tg.Accepts.Load(), "target dialled for a client with the wrong key")
}

// TestStdioSIGHUPIsSilent: ssh sends SIGHUP to its ProxyCommand as it
// exits; a stdio connect neither dies of it nor writes a word to the
// user's terminal, and its connection goes on.
func TestStdioSIGHUPIsSilent(t *testing.T) {
	key := pipetest.KeyFile(t)
	tg := pipetest.EchoTarget(t)
	listen := pipetest.Start(t, service.Listen, "127.0.0.1:0", tg.Addr, key, nil)
	cmd := command("connect", "-t", listen.Addr, "-k", key)
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	pipetest.EchoOver(t, stdin, stdout, "before")
	require.NoError(t, cmd.Process.Signal(syscall.SIGHUP))
	time.Sleep(100 * time.Millisecond)
	pipetest.EchoOver(t, stdin, stdout, "after")
	stdin.Close()
	io.Copy(io.Discard, stdout)
	require.NoError(t, cmd.Wait())
	assert.Empty(t, stderr.String())
}
