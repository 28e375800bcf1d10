package main

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/spipe-dev/spipe/internal/testutil"
)

// asCommand, set in the environment, makes the test binary run as spipe
// itself: tests that need a real process (signals, exit status) re-run
// their own binary, which carries the build's race and purego settings.
const asCommand = "SPIPE_TEST_AS_COMMAND"

func TestMain(m *testing.M) {
	if os.Getenv(asCommand) == "1" {
		os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// command returns an exec.Cmd that runs spipe with args.
func command(args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), asCommand+"=1")
	return cmd
}

// invoke runs the command line in this process, as main does, and returns
// the exit code, stdout and stderr.
func invoke(stdin string, args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = run(args, io.NopCloser(strings.NewReader(stdin)), nopCloser{&out}, nopCloser{&errb})
	return code, out.String(), errb.String()
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// proc is a running spipe process.
type proc struct {
	cmd    *exec.Cmd
	stderr *testutil.Log
	done   chan struct{}
	err    error
}

// start runs spipe with args; the test's cleanup kills it if still alive.
func start(t *testing.T, stdin io.Reader, args ...string) *proc {
	t.Helper()
	cmd := command(args...)
	cmd.Stdin = stdin
	return startCmd(t, cmd)
}

// startCmd starts cmd with its stderr collected; the test's cleanup kills
// it if still alive, and shows its stderr if the test failed.
func startCmd(t *testing.T, cmd *exec.Cmd) *proc {
	t.Helper()
	p := &proc{cmd: cmd, stderr: &testutil.Log{}, done: make(chan struct{})}
	p.cmd.Stderr = p.stderr
	require.NoError(t, p.cmd.Start())
	go func() { p.err = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		p.cmd.Process.Kill()
		<-p.done
		if t.Failed() {
			t.Logf("%s stderr:\n%s", strings.Join(cmd.Args, " "), p.stderr.String())
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
	return p.stderr.Wait(t, re, p.done)
}

// serving starts spipe with args (which must listen on a port-0 or
// socket -s) and returns the process and the address it serves on.
func serving(t *testing.T, args ...string) (*proc, string) {
	t.Helper()
	p := start(t, nil, args...)
	return p, p.waitLog(t, `msg=serving mode=\w+ source=(\S+)`)
}

// pair starts "spipe listen" in front of target and "spipe connect" in
// front of that, and returns the address clients use and both processes.
func pair(t *testing.T, target, key string, extra ...string) (addr string, listen, connect *proc) {
	t.Helper()
	listen, laddr := serving(t, append([]string{"listen", "-s", "127.0.0.1:0", "-t", target, "-k", key}, extra...)...)
	connect, caddr := serving(t, append([]string{"connect", "-s", "127.0.0.1:0", "-t", laddr, "-k", key}, extra...)...)
	return caddr, listen, connect
}
