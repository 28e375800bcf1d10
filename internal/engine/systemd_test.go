package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestListenSystemd passes two listening sockets to a child process the
// way systemd does (descriptors from 3, LISTEN_FDS, LISTEN_FDNAMES) and
// checks that "systemd" takes the first and "systemd:NAME" the named one,
// each once, and that a wrong name lists the names passed. The child is
// this test binary running systemdChild. The whole path through the
// command, under systemd-socket-activate, is tested in cmd/spipe.
func TestListenSystemd(t *testing.T) {
	var files []*os.File
	var addrs []string
	for range 2 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		f, err := ln.(*net.TCPListener).File()
		require.NoError(t, err)
		addrs = append(addrs, ln.Addr().String())
		ln.Close() // the child holds the socket through f
		files = append(files, f)
	}
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "SPIPE_SYSTEMD_CHILD=1", "LISTEN_FDS=2", "LISTEN_FDNAMES=first:second")
	cmd.ExtraFiles = files
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Start())
	for _, f := range files {
		f.Close()
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()

	for i, name := range []string{"first", "second"} {
		c, err := net.DialTimeout("tcp", addrs[i], 5*time.Second)
		require.NoError(t, err)
		_ = c.SetDeadline(time.Now().Add(10 * time.Second))
		got, err := io.ReadAll(c)
		c.Close()
		require.NoError(t, err)
		assert.Equal(t, name, string(got), "socket %d", i)
	}
	select {
	case err := <-done:
		require.NoError(t, err, "child:\n%s", out.String())
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("child did not finish:\n%s", out.String())
	}
	assert.Equal(t, "systemd child: ok\n", out.String())
}

// systemdChild is TestListenSystemd's child (TestMain runs it in place of
// the tests): it returns what went wrong, nil if nothing did.
func systemdChild() error {
	// systemd names the process the sockets are for; the parent could not
	// know this PID before starting us.
	os.Setenv("LISTEN_PID", strconv.Itoa(os.Getpid()))
	ctx := context.Background()
	second, err := Listen(ctx, Addr{Network: "systemd", Address: "second"}, ListenOptions{})
	if err != nil {
		return err
	}
	first, err := Listen(ctx, Addr{Network: "systemd"}, ListenOptions{NoKeepAlive: true})
	if err != nil {
		return err
	}
	for name, want := range map[string]string{
		"second": "listen on systemd:second: address already in use (the socket is used twice)",
		"third":  "listen on systemd:third: systemd passed no socket of that name (it passed: first, second; set FileDescriptorName= in the .socket unit)",
	} {
		_, err = Listen(ctx, Addr{Network: "systemd", Address: name}, ListenOptions{})
		if err == nil || err.Error() != want {
			return fmt.Errorf("systemd:%s: got error %v, want %q", name, err, want)
		}
	}
	if v := os.Getenv("LISTEN_FDS"); v != "" {
		return fmt.Errorf("LISTEN_FDS=%s left for children to inherit", v)
	}
	for _, l := range []struct {
		ln        net.Listener
		name      string
		keepAlive int
	}{{first, "first", 0}, {second, "second", 1}} {
		c, err := l.ln.Accept()
		if err != nil {
			return err
		}
		var ka int
		var kerr error
		rc, err := c.(syscall.Conn).SyscallConn()
		if err == nil {
			err = rc.Control(func(fd uintptr) { ka, kerr = syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_KEEPALIVE) })
		}
		if err = errors.Join(err, kerr); err != nil {
			return err
		}
		if ka != l.keepAlive {
			return fmt.Errorf("%s: SO_KEEPALIVE %d, want %d", l.name, ka, l.keepAlive)
		}
		fmt.Fprint(c, l.name)
		c.Close()
		l.ln.Close()
	}
	fmt.Println("systemd child: ok")
	return nil
}

func TestListenSystemdWithoutSockets(t *testing.T) {
	_, err := Listen(context.Background(), Addr{Network: "systemd"}, ListenOptions{})
	assert.EqualError(t, err, "listen on systemd: systemd passed no socket (is the service started by its .socket unit? LISTEN_FDS is unset)")
}
