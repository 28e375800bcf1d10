package main

import (
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/spipe-dev/spipe/internal/testutil/pipetest"
)

// socketActivated starts spipe under systemd-socket-activate, which
// listens on addr, waits for the first connection and then runs spipe
// with the socket as descriptor 3 (LISTEN_FDS, LISTEN_PID and, with name,
// LISTEN_FDNAMES), as a systemd .socket unit does.
func socketActivated(t *testing.T, addr, name string, args ...string) *proc {
	t.Helper()
	activate, err := exec.LookPath("systemd-socket-activate")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("systemd-socket-activate is missing (apt-get install systemd); make test installs it")
		}
		t.Skip("systemd-socket-activate is missing: apt-get install systemd (make test installs it)")
	}
	sa := []string{"-l", addr, "-E", asCommand + "=1"}
	if name != "" {
		sa = append(sa, "--fdname="+name)
	}
	p := startCmd(t, exec.Command(activate, append(append(sa, os.Args[0]), args...)...))
	p.waitLog(t, `Listening on `)
	return p
}

// TestSocketActivation: listen takes its socket by name (-s systemd:NAME)
// and connect takes the first one passed (-s systemd), each from
// systemd-socket-activate; data flows through both, and SIGTERM stops them
// with exit status 0.
func TestSocketActivation(t *testing.T) {
	key := pipetest.KeyFile(t)
	tg := pipetest.EchoTarget(t)
	laddr, caddr := pipetest.FreeAddr(t), pipetest.FreeAddr(t)
	listen := socketActivated(t, laddr, "spipe", "listen", "-s", "systemd:spipe", "-t", tg.Addr, "-k", key)
	connect := socketActivated(t, caddr, "", "connect", "-s", "systemd", "-t", laddr, "-k", key)

	// The first connection makes systemd-socket-activate start connect,
	// whose first connection starts listen: both accept it from the
	// socket's backlog.
	msg := pipetest.RandomBytes(100_000)
	c := pipetest.Dial(t, caddr)
	assert.Equal(t, msg, pipetest.RoundTrip(t, c, msg))
	connect.waitLog(t, `msg=serving mode=connect source=`+caddr)
	listen.waitLog(t, `msg=serving mode=listen source=`+laddr)
	assert.NoError(t, pipetest.TryEcho(caddr, "again"))

	for _, p := range []*proc{listen, connect} {
		p.signal(t, syscall.SIGTERM)
		assert.Equal(t, 0, p.wait(t, 10*time.Second))
	}
}
