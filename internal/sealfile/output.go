// Package sealfile runs "spipe seal" and "spipe open": it sets up the
// input and output (a -o file is written under a temporary name beside it
// and renamed into place only on success), reads a passphrase from the
// terminal, shows progress, and drives pkg/spipe/sealed. cmd/spipe only
// parses flags and maps the errors to exit statuses.
package sealfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// Errors the tool gives an exit status of its own.
var (
	// ErrOutputExists: -o names an existing file and --force is not given.
	ErrOutputExists = errors.New("output file exists (use --force to overwrite it)")
	// ErrNotWritable: the -o file's directory cannot be written.
	ErrNotWritable = errors.New("cannot write the output")
)

// Output is where the tool writes: standard output, or a -o file that
// appears only once Commit is called.
type Output struct {
	io.Writer
	path  string   // "" for standard output
	tmp   *os.File // the temporary file beside path
	dev   *os.File // or path itself, when it is not a regular file
	force bool
}

// CreateOutput opens the output: stdout when path is "" or "-"; path
// itself when it is a device, FIFO or socket; otherwise a new temporary
// file in path's directory, mode 0600 until Commit (a plaintext never sits readable by others while it is being
// written). An existing path without force is ErrOutputExists; a
// directory that cannot be written is ErrNotWritable.
func CreateOutput(path string, force bool, stdout io.Writer) (*Output, error) {
	if path == "" || path == "-" {
		return &Output{Writer: stdout}, nil
	}
	if fi, err := os.Stat(path); err == nil {
		switch {
		case fi.IsDir():
			return nil, fmt.Errorf("%s: is a directory", path)
		case !fi.Mode().IsRegular():
			// A device, FIFO or socket (/dev/null, a named pipe) is
			// written in place: renaming a temporary file over it would
			// replace the device with a file, and there is no file to
			// leave behind.
			f, err := os.OpenFile(path, os.O_WRONLY, 0)
			if err != nil {
				return nil, fmt.Errorf("%s: %w: %w", path, ErrNotWritable, unwrapPath(err))
			}
			return &Output{Writer: f, path: path, dev: f}, nil
		case !force:
			return nil, fmt.Errorf("%s: %w", path, ErrOutputExists)
		}
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".spipe-*")
	if err != nil {
		if errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS) || errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: %w: %w", path, ErrNotWritable, unwrapPath(err))
		}
		return nil, fmt.Errorf("%s: %w", path, unwrapPath(err))
	}
	return &Output{Writer: tmp, path: path, tmp: tmp, force: force}, nil
}

// Commit makes a -o file appear under its name: it syncs and closes the
// temporary file, gives it the mode a new file gets (0666 less the
// umask), and renames it into place. Without force, a file that appeared
// at the path meanwhile is kept and Commit fails with ErrOutputExists.
func (o *Output) Commit() error {
	if o.dev != nil {
		return o.dev.Close()
	}
	if o.tmp == nil {
		return nil
	}
	tmp := o.tmp.Name()
	err := o.tmp.Sync()
	if cerr := o.tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o666&^umask())
	}
	if err == nil && !o.force {
		// Link, unlike rename, fails if the path appeared meanwhile.
		if err = os.Link(tmp, o.path); err == nil {
			os.Remove(tmp)
		} else if errors.Is(err, fs.ErrExist) {
			err = ErrOutputExists
		}
	} else if err == nil {
		err = os.Rename(tmp, o.path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("%s: %w", o.path, unwrapPath(err))
	}
	return nil
}

// Abort removes a -o file's temporary file: a failed run leaves nothing.
func (o *Output) Abort() {
	if o.dev != nil {
		o.dev.Close()
	}
	if o.tmp != nil {
		o.tmp.Close()
		os.Remove(o.tmp.Name())
	}
}

func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}

// umask reads the process's umask (setting it back at once).
func umask() os.FileMode {
	m := syscall.Umask(0)
	syscall.Umask(m)
	return os.FileMode(m)
}
