// Package pidfile writes the spipe tool's PID file and holds a lock on it
// while the process runs, so a second instance given the same file fails
// at start-up instead of overwriting it (and deleting it when it exits).
package pidfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ErrLocked reports a PID file held by another running process.
var ErrLocked = errors.New("in use by another running process")

// Write takes the lock on path (creating it with mode 0644), writes the
// process ID into it and returns a function that removes it and releases
// the lock. A file left by a process that died is taken over; one whose
// lock is held is ErrLocked, naming the holder's PID when it can be read.
func Write(path string) (remove func(), err error) {
	f, err := lockFile(path)
	if err != nil {
		return nil, err
	}
	err = f.Truncate(0)
	if err == nil {
		_, err = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	if err == nil {
		err = f.Sync()
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("pidfile %s: %w", path, err)
	}
	return func() {
		// Removed while still locked: a new instance either finds no file
		// or locks a new one, never this one.
		os.Remove(path)
		f.Close()
	}, nil
}

// lockFile opens path and takes its lock, making sure the file locked is
// still the one at path (a process exiting removes it, and one that opened
// it just before would otherwise hold the lock of a deleted file).
func lockFile(path string) (*os.File, error) {
	for {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			return nil, openError(path, err)
		}
		if err := lock(f); err != nil {
			f.Close()
			if errors.Is(err, errWouldBlock) {
				return nil, lockedError(path)
			}
			return nil, fmt.Errorf("pidfile %s: lock: %w", path, err)
		}
		held, err1 := f.Stat()
		now, err2 := os.Stat(path)
		if err1 == nil && err2 == nil && os.SameFile(held, now) {
			return f, nil
		}
		f.Close()
		if err1 != nil {
			return nil, fmt.Errorf("pidfile %s: %w", path, err1)
		}
		// Removed or replaced under us: take the lock on what is there now.
	}
}

func openError(path string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("pidfile %s: directory %s does not exist", path, filepath.Dir(path))
	}
	if errors.Is(err, fs.ErrPermission) {
		return fmt.Errorf("pidfile %s: permission denied", path)
	}
	return fmt.Errorf("pidfile %s: %w", path, err)
}

func lockedError(path string) error {
	b, err := os.ReadFile(path)
	if pid := strings.TrimSpace(string(b)); err == nil && pid != "" {
		return fmt.Errorf("pidfile %s: %w (PID %s)", path, ErrLocked, pid)
	}
	return fmt.Errorf("pidfile %s: %w", path, ErrLocked)
}
