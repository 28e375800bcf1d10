package main

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"time"
)

// restart measures how soon "spipe connect --mux" serves a new connection
// once a restarted listener is up (issue 22's target: within 1 s). It
// runs a listener (bin listen) and a connect --mux in front of it, both
// to target, then n times: holds a stream open through them, sends the
// listener SIGTERM, starts a new one on the same port gap later, and
// from the moment the new listener accepts, times a new connection
// through connect --mux to its first echoed byte; then finishes the held
// stream (on the old listener, in its grace period) and checks it came
// back intact. It prints the median and the worst of the n times.
func restart(bin, target string, n int, gap time.Duration) error {
	dir, err := os.MkdirTemp("", "benchpipe-restart-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	key := filepath.Join(dir, "key")
	if out, err := exec.Command(bin, "keygen", key).CombinedOutput(); err != nil {
		return fmt.Errorf("keygen: %v: %s", err, out)
	}
	lport, err := pickPort()
	if err != nil {
		return err
	}
	cport, err := pickPort()
	if err != nil {
		return err
	}
	laddr, caddr := fmt.Sprintf("127.0.0.1:%d", lport), fmt.Sprintf("127.0.0.1:%d", cport)
	startListener := func() (*exec.Cmd, error) {
		c := exec.Command(bin, "listen", "-s", laddr, "-t", target, "-k", key, "--log-level", "error",
			"--shutdown-timeout", "30s", "--max-conns", "1000")
		c.Stderr = os.Stderr
		return c, c.Start()
	}
	listener, err := startListener()
	if err != nil {
		return err
	}
	procs := []*exec.Cmd{listener}
	defer func() {
		for _, p := range procs {
			_ = p.Process.Signal(syscall.SIGTERM)
			done := make(chan struct{})
			go func() { _ = p.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				_ = p.Process.Kill()
			}
		}
	}()
	if err := wait(laddr); err != nil {
		return err
	}
	connect := exec.Command(bin, "connect", "--mux", "-s", caddr, "-t", laddr, "-k", key, "--log-level", "error",
		"--max-conns", "1000")
	connect.Stderr = os.Stderr
	if err := connect.Start(); err != nil {
		return err
	}
	procs = append(procs, connect)
	if err := wait(caddr); err != nil {
		return err
	}

	var served []time.Duration
	for i := range n {
		held, err := dial(caddr)
		if err != nil {
			return err
		}
		if err := echoOn(held, fmt.Sprintf("held %d ", i)); err != nil {
			return fmt.Errorf("round %d: the held stream: %w", i, err)
		}
		old := listener
		if err := old.Process.Signal(syscall.SIGTERM); err != nil {
			return err
		}
		time.Sleep(gap)
		if listener, err = startListener(); err != nil {
			return err
		}
		procs = append(procs, listener)
		up, err := firstAccept(laddr)
		if err != nil {
			return err
		}
		c, err := dial(caddr)
		if err != nil {
			return err
		}
		err = echoOn(c, "x")
		took := time.Since(up)
		c.Close()
		if err != nil {
			return fmt.Errorf("round %d: a new connection after the restart: %w", i, err)
		}
		served = append(served, took)
		if err := echoOn(held, fmt.Sprintf("still held %d", i)); err != nil {
			return fmt.Errorf("round %d: the stream held across the restart: %w", i, err)
		}
		held.Close()
		_ = old.Wait()
	}
	slices.Sort(served)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1e3 }
	fmt.Printf("n=%d served_ms=%.1f max_ms=%.1f\n", n, ms(served[len(served)/2]), ms(served[len(served)-1]))
	return nil
}

// firstAccept returns when addr first accepts a connection (polling).
func firstAccept(addr string) (time.Time, error) {
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			now := time.Now()
			c.Close()
			return now, nil
		}
		if time.Now().After(deadline) {
			return time.Time{}, err
		}
		time.Sleep(time.Millisecond)
	}
}

// echoOn sends msg on c and reads it back from the echo target.
func echoOn(c net.Conn, msg string) error {
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := io.WriteString(c, msg); err != nil {
		return err
	}
	back := make([]byte, len(msg))
	if _, err := io.ReadFull(c, back); err != nil {
		return err
	}
	if !bytes.Equal(back, []byte(msg)) {
		return fmt.Errorf("echo %q came back as %q", msg, back)
	}
	return nil
}

// pickPort is a loopback port nothing listens on (at that moment).
func pickPort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}
