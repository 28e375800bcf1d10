// Package pidfile writes and removes the spipe tool's PID file.
package pidfile

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// Write writes the process ID to path, atomically (a reader never sees a
// partial file), and returns a function that removes it.
func Write(path string) (remove func(), err error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".spipe-pid-*")
	if err != nil {
		return nil, fmt.Errorf("pidfile %s: %w", path, err)
	}
	_, err = tmp.WriteString(strconv.Itoa(os.Getpid()) + "\n")
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return nil, fmt.Errorf("pidfile %s: %w", path, err)
	}
	return func() { os.Remove(path) }, nil
}
