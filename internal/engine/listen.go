package engine

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"syscall"
	"time"
)

// ListenOptions shapes the sockets Listen creates.
type ListenOptions struct {
	// NoKeepAlive turns TCP keep-alives off on accepted connections.
	NoKeepAlive bool
	// SocketMode is the permission of a created Unix socket (0 means 0600).
	SocketMode fs.FileMode
}

// ErrAddrInUse reports that the address to listen on is taken.
var ErrAddrInUse = errors.New("address already in use")

// Listen opens a listener on a. A Unix-socket path left behind by a dead
// process is replaced; one that something still listens on, or a path that
// is not a socket, is an error. A systemd address takes a socket systemd
// passed instead (socket activation), as it is: systemd made it. Accepted
// TCP connections have TCP_NODELAY and (unless NoKeepAlive) keep-alives
// set.
func Listen(ctx context.Context, a Addr, opts ListenOptions) (net.Listener, error) {
	if a.IsUnix() {
		return listenUnix(ctx, a.Address, opts.SocketMode)
	}
	if a.IsSystemd() {
		return listenSystemd(a, opts)
	}
	lc := listenConfig(opts.NoKeepAlive)
	ln, err := lc.Listen(ctx, "tcp", a.Address)
	if err != nil {
		return nil, listenError(a, err)
	}
	return ln, nil
}

func listenUnix(ctx context.Context, path string, mode fs.FileMode) (net.Listener, error) {
	if mode == 0 {
		mode = 0o600
	}
	if err := removeStaleSocket(path); err != nil {
		return nil, err
	}
	var ln net.Listener
	err := withUmask(int(0o777&^mode.Perm()), func() error {
		var err error
		ln, err = (&net.ListenConfig{}).Listen(ctx, "unix", path)
		return err
	})
	if err != nil {
		return nil, listenError(Addr{Network: "unix", Address: path}, err)
	}
	// The umask made the socket no more open than asked; chmod makes it
	// exactly as open as asked (the umask can only take bits away).
	if err := os.Chmod(path, mode.Perm()); err != nil {
		ln.Close()
		return nil, fmt.Errorf("listen on %s: %w", path, err)
	}
	return ln, nil
}

// removeStaleSocket deletes a socket file nobody accepts on any more, the
// way a crashed daemon leaves it.
func removeStaleSocket(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("listen on %s: %w", path, err)
	}
	if fi.Mode().Type() != fs.ModeSocket {
		return fmt.Errorf("listen on %s: file exists and is not a socket", path)
	}
	c, err := net.DialTimeout("unix", path, time.Second)
	if err == nil {
		c.Close()
		return fmt.Errorf("listen on %s: %w", path, ErrAddrInUse)
	}
	if !errors.Is(err, syscall.ECONNREFUSED) {
		return fmt.Errorf("listen on %s: %w", path, err)
	}
	if err := os.Remove(path); err != nil {
		return fmt.Errorf("listen on %s: removing stale socket: %w", path, err)
	}
	return nil
}

func listenError(a Addr, err error) error {
	if errors.Is(err, syscall.EADDRINUSE) {
		return fmt.Errorf("listen on %s: %w", a, ErrAddrInUse)
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Err != nil {
		err = op.Err
	}
	return fmt.Errorf("listen on %s: %w", a, err)
}
