// Package keyring loads the spipe tool's key files: it reports missing,
// unreadable and too-short files with one clear line each, warns (once per
// file) about key files that others can read, as ssh does, and re-reads
// them on request so keys rotate without a restart. It also writes new
// key files (Generate).
package keyring

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"

	"github.com/spipe-dev/spipe/pkg/spipe"
)

// Stdin is the key-file name that means "read the key from standard input".
const Stdin = "-"

// Keyring is the list of key files named on the command line and the keys
// last loaded from them.
type Keyring struct {
	files []string
	stdin *spipe.Key // read once: standard input cannot be read again
	log   *slog.Logger
	// warned holds the files whose loose permissions were reported, so a
	// reload does not repeat it; a file made private is forgotten, so it
	// is reported again if it is loosened again.
	warned map[string]bool
	// weak holds the fingerprints of keys already reported as not looking
	// random, so a reload does not repeat the warning for the same key.
	weak map[string]bool
}

// Load reads every file (Stdin at most once, from stdin) and returns the
// keyring. An error names the file and the problem, never key material.
func Load(files []string, stdin io.Reader, log *slog.Logger) (*Keyring, []*spipe.Key, error) {
	if len(files) == 0 {
		return nil, nil, errors.New("no key file given (-k FILE)")
	}
	r := &Keyring{files: files, log: log, warned: map[string]bool{}, weak: map[string]bool{}}
	stdins := 0
	for _, f := range files {
		if f == Stdin {
			stdins++
		}
	}
	if stdins > 1 {
		return nil, nil, errors.New("-k - given twice: standard input holds one key")
	}
	if stdins == 1 {
		k, err := r.readKey("key on standard input", stdin)
		if err != nil {
			return nil, nil, describe("key on standard input", err)
		}
		r.stdin = k
	}
	keys, err := r.Reload()
	if err != nil {
		return nil, nil, err
	}
	return r, keys, nil
}

// Files returns the key files in command-line order, as Load was given
// them: the keys Load and Reload return are in the same order.
func (r *Keyring) Files() []string { return r.files }

// Reload reads the key files again and returns their keys in command-line
// order. The key from standard input is the one read at Load.
func (r *Keyring) Reload() ([]*spipe.Key, error) {
	keys := make([]*spipe.Key, 0, len(r.files))
	for _, f := range r.files {
		if f == Stdin {
			keys = append(keys, r.stdin)
			continue
		}
		k, err := r.loadFile(f)
		if err != nil {
			return nil, err
		}
		keys = append(keys, k)
	}
	return keys, nil
}

func (r *Keyring) loadFile(path string) (*spipe.Key, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, describe("key file "+path, unwrapPath(err))
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, describe("key file "+path, unwrapPath(err))
	}
	if fi.IsDir() {
		return nil, fmt.Errorf("key file %s: is a directory", path)
	}
	if perm := fi.Mode().Perm(); perm&0o077 == 0 {
		delete(r.warned, path)
	} else if !r.warned[path] && r.log != nil {
		r.log.Warn("key file is accessible by others; chmod 600 it", "file", path, "mode", fmt.Sprintf("%04o", perm))
		r.warned[path] = true
	}
	k, err := r.readKey("key file "+path, f)
	if err != nil {
		return nil, describe("key file "+path, err)
	}
	return k, nil
}

// maxKeyFile bounds what a key file may hold (spipe.NewKey refuses more),
// so a mistaken path such as a device fails instead of filling memory.
const maxKeyFile = 1 << 20

// readKey reads key material from f (what names it, for the warning),
// derives the key, and warns, once per key, if the material does not look
// like one.
func (r *Keyring) readKey(what string, f io.Reader) (*spipe.Key, error) {
	material, err := io.ReadAll(io.LimitReader(f, maxKeyFile+1))
	defer clear(material)
	if err != nil {
		return nil, err
	}
	k, err := spipe.NewKey(material)
	if err != nil {
		return nil, err
	}
	if why := weakKeyReason(material); why != "" && r.log != nil && !r.weak[k.Fingerprint()] {
		r.weak[k.Fingerprint()] = true
		r.log.Warn(what+" does not look like a key: use spipe keygen (32 random bytes as 64 hex digits); "+
			"one recorded handshake lets an attacker guess a weak key offline", "reason", why, "fingerprint", k.Fingerprint())
	}
	return k, nil
}

// describe turns a key-loading error into the one line the user sees.
func describe(what string, err error) error {
	switch {
	case errors.Is(err, spipe.ErrEmptyKey):
		return fmt.Errorf("%s is empty (make a key with: spipe keygen FILE)", what)
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s: no such file", what)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("%s: permission denied", what)
	}
	return fmt.Errorf("%s: %w", what, err)
}

// unwrapPath drops the *PathError layer, whose text repeats the path.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
