package keyring

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/spipe-dev/spipe/pkg/spipe"
)

// KeyBytes is how much randomness Generate puts in a key file.
const KeyBytes = 32

// newKeyText returns a new key file's content, KeyBytes random bytes as
// hex text and a newline, and the key it makes.
func newKeyText() ([]byte, *spipe.Key) {
	var raw [KeyBytes]byte
	rand.Read(raw[:]) // never fails (crypto/rand panics on a broken system source)
	text := make([]byte, 2*KeyBytes+1)
	hex.Encode(text, raw[:])
	text[len(text)-1] = '\n'
	clear(raw[:])
	k, err := spipe.NewKey(text)
	if err != nil {
		panic("keyring: a generated key does not load: " + err.Error())
	}
	return text, k
}

// Generate writes a new key file: KeyBytes random bytes as hex text and a
// newline, mode 0600, and returns the key. Missing parent directories are
// created with mode 0700 (a fresh ~/.spipe). An existing path is an error
// unless force is set, and the key never lands on disk with looser
// permissions or half written: it is written to a private temporary file
// in the same directory and renamed into place.
func Generate(path string, force bool) (*spipe.Key, error) {
	if !force {
		if _, err := os.Lstat(path); err == nil {
			return nil, fmt.Errorf("key file %s exists (use --force to overwrite it)", path)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return nil, describe("key file "+path, unwrapPath(err))
		}
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("key file %s: creating directory %s: %w", path, dir, unwrapPath(err))
	}
	text, key := newKeyText()
	defer clear(text)

	tmp, err := os.CreateTemp(dir, ".spipe-key-*") // CreateTemp uses mode 0600
	if err != nil {
		return nil, describe("key file "+path, unwrapPath(err))
	}
	_, err = tmp.Write(text)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), 0o600)
	}
	if err == nil && !force {
		// Link, unlike rename, fails if path appeared meanwhile.
		if err = os.Link(tmp.Name(), path); err == nil {
			err = os.Remove(tmp.Name())
		} else if errors.Is(err, fs.ErrExist) {
			err = fmt.Errorf("exists (use --force to overwrite it)")
		}
	} else if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return nil, fmt.Errorf("key file %s: %w", path, unwrapLink(err))
	}
	return key, nil
}

// GenerateTo writes a new key's content to w (for "spipe keygen -") and
// returns the key.
func GenerateTo(w io.Writer) (*spipe.Key, error) {
	text, key := newKeyText()
	defer clear(text)
	if _, err := w.Write(text); err != nil {
		return nil, fmt.Errorf("writing the key: %w", err)
	}
	return key, nil
}

func unwrapLink(err error) error {
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}
