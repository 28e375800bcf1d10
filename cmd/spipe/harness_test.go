package main

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// spipeBin is the tool under test, built once by TestMain with the same
// race and purego settings as the test binary.
var spipeBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "spipe-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	spipeBin = filepath.Join(dir, "spipe")
	args := []string{"build", "-o", spipeBin}
	if raceEnabled {
		args = append(args, "-race")
	}
	if puregoEnabled {
		args = append(args, "-tags", "purego")
	}
	build := exec.Command("go", append(args, ".")...)
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building spipe:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// syncBuffer collects a process's stderr while tests read it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// proc is a running spipe.
type proc struct {
	cmd    *exec.Cmd
	stderr *syncBuffer
	done   chan struct{}
	err    error
}

// start runs spipe with args; the test's cleanup kills it if still alive.
func start(t *testing.T, stdin io.Reader, args ...string) *proc {
	t.Helper()
	p := &proc{cmd: exec.Command(spipeBin, args...), stderr: &syncBuffer{}, done: make(chan struct{})}
	p.cmd.Stdin = stdin
	p.cmd.Stderr = p.stderr
	require.NoError(t, p.cmd.Start())
	go func() { p.err = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		p.cmd.Process.Kill()
		<-p.done
		if t.Failed() {
			t.Logf("spipe %s stderr:\n%s", strings.Join(args, " "), p.stderr.String())
		}
	})
	return p
}

// wait waits for the process to exit and returns its exit code.
func (p *proc) wait(t *testing.T, within time.Duration) int {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(within):
		t.Fatalf("spipe did not exit within %v; stderr:\n%s", within, p.stderr.String())
	}
	return p.cmd.ProcessState.ExitCode()
}

func (p *proc) signal(t *testing.T, sig syscall.Signal) {
	t.Helper()
	require.NoError(t, p.cmd.Process.Signal(sig))
}

// waitLog waits until stderr matches re and returns the first submatch
// (or the whole match).
func (p *proc) waitLog(t *testing.T, re string) string {
	t.Helper()
	rx := regexp.MustCompile(re)
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if m := rx.FindStringSubmatch(p.stderr.String()); m != nil {
			return m[len(m)-1]
		}
		select {
		case <-p.done:
			if m := rx.FindStringSubmatch(p.stderr.String()); m != nil {
				return m[len(m)-1]
			}
			t.Fatalf("spipe exited (%v) before logging %q; stderr:\n%s", p.err, re, p.stderr.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
	t.Fatalf("spipe did not log %q; stderr:\n%s", re, p.stderr.String())
	return ""
}

// serving starts spipe with args (which must listen on a port-0 or
// socket -s) and returns the process and the address it serves on.
func serving(t *testing.T, args ...string) (*proc, string) {
	t.Helper()
	p := start(t, nil, args...)
	return p, p.waitLog(t, `msg=serving mode=\w+ source=(\S+)`)
}

// keyFile writes a fresh key with "spipe keygen" and returns its path.
func keyFile(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "key")
	out, err := exec.Command(spipeBin, "keygen", path).CombinedOutput()
	require.NoError(t, err, "%s", out)
	return path
}

// target is an in-test server standing for the program behind spipe.
type target struct {
	ln      net.Listener
	accepts atomic.Int32
	addr    string
}

// echoTarget echoes each connection's bytes back and half-closes when
// the client does, so both directions of half-close are exercised.
func echoTarget(t *testing.T) *target {
	return newTarget(t, func(c net.Conn) {
		io.Copy(c, c)
		c.(*net.TCPConn).CloseWrite()
	})
}

func newTarget(t *testing.T, serve func(net.Conn)) *target {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	tg := &target{ln: ln, addr: ln.Addr().String()}
	var wg sync.WaitGroup
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			tg.accepts.Add(1)
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

// pair starts "spipe listen" in front of tg and "spipe connect" in front
// of that, and returns the address clients use and both processes.
func pair(t *testing.T, tg *target, key string, extra ...string) (addr string, listen, connect *proc) {
	t.Helper()
	listen, laddr := serving(t, append([]string{"listen", "-s", "127.0.0.1:0", "-t", tg.addr, "-k", key}, extra...)...)
	connect, caddr := serving(t, append([]string{"connect", "-s", "127.0.0.1:0", "-t", laddr, "-k", key}, extra...)...)
	return caddr, listen, connect
}

func dial(t *testing.T, addr string) *net.TCPConn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c.(*net.TCPConn)
}

// roundTrip sends msg, half-closes and returns everything read back.
func roundTrip(t *testing.T, c *net.TCPConn, msg []byte) []byte {
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
