package keyring

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// KeyBytes is how much randomness Generate puts in a key file.
const KeyBytes = 32

// Generate writes a new key file: KeyBytes random bytes as hex text and a
// newline, mode 0600. An existing path is an error unless force is set,
// and the key never lands on disk with looser permissions or half written:
// it is written to a private temporary file in the same directory and
// renamed into place.
func Generate(path string, force bool) error {
	if !force {
		if _, err := os.Lstat(path); err == nil {
			return fmt.Errorf("key file %s exists (use --force to overwrite it)", path)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return describe("key file "+path, unwrapPath(err))
		}
	}
	var raw [KeyBytes]byte
	rand.Read(raw[:]) // never fails (crypto/rand panics on a broken system source)
	text := make([]byte, 2*KeyBytes+1)
	hex.Encode(text, raw[:])
	text[len(text)-1] = '\n'
	defer clear(text)
	clear(raw[:])

	tmp, err := os.CreateTemp(filepath.Dir(path), ".spipe-key-*") // CreateTemp uses mode 0600
	if err != nil {
		return describe("key file "+path, unwrapPath(err))
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
		return fmt.Errorf("key file %s: %w", path, unwrapLink(err))
	}
	return nil
}

func unwrapLink(err error) error {
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}
