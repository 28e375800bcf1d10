//go:build !unix

package pidfile

import (
	"errors"
	"os"
)

var errWouldBlock = errors.New("locked")

// lock does nothing where there is no flock: the file is written, not
// locked.
func lock(*os.File) error { return nil }
