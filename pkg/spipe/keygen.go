package spipe

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// GeneratedKeyBytes is how much randomness GenerateKey puts in a key file.
const GeneratedKeyBytes = 32

// GenerateKey returns the content of a new key file, GeneratedKeyBytes
// random bytes as 64 lower-case hex digits and a newline (what `spipe
// keygen` writes), and the Key it makes. The caller should clear material
// once it is stored.
func GenerateKey() (material []byte, key *Key) {
	var raw [GeneratedKeyBytes]byte
	rand.Read(raw[:]) // never fails (crypto/rand panics on a broken system source)
	material = make([]byte, 2*GeneratedKeyBytes+1)
	hex.Encode(material, raw[:])
	material[len(material)-1] = '\n'
	clear(raw[:])
	key, err := newKey(material)
	if err != nil {
		panic("spipe: a generated key is invalid: " + err.Error())
	}
	return material, key
}

// WriteKeyFile writes a new key file (GenerateKey's content) at path with
// mode 0600 and returns its Key, as `spipe keygen FILE` does. Missing
// parent directories are created with mode 0700. An existing path is an
// error wrapping fs.ErrExist unless overwrite is set. The key never lands
// on disk with looser permissions or half written: it goes to a private
// temporary file in the same directory, which is then linked (renamed,
// with overwrite) into place. Errors name the path, never the key.
func WriteKeyFile(path string, overwrite bool) (*Key, error) {
	k, err := writeKeyFile(path, overwrite)
	if err != nil {
		return nil, fmt.Errorf("spipe: key file %s: %w", path, err)
	}
	return k, nil
}

func writeKeyFile(path string, overwrite bool) (*Key, error) {
	if !overwrite {
		if _, err := os.Lstat(path); err == nil {
			return nil, fs.ErrExist
		} else if !errors.Is(err, fs.ErrNotExist) {
			return nil, unwrapPath(err)
		}
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating directory %s: %w", dir, unwrapPath(err))
	}
	material, key := GenerateKey()
	defer clear(material)
	tmp, err := os.CreateTemp(dir, ".spipe-key-*") // CreateTemp uses mode 0600
	if err != nil {
		return nil, unwrapPath(err)
	}
	_, err = tmp.Write(material)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), 0o600)
	}
	if err == nil && !overwrite {
		// Link, unlike rename, fails if path appeared meanwhile.
		if err = os.Link(tmp.Name(), path); err == nil {
			err = os.Remove(tmp.Name())
		}
	} else if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		var le *os.LinkError
		if errors.As(err, &le) {
			err = le.Err
		}
		return nil, unwrapPath(err)
	}
	return key, nil
}

// unwrapPath drops an *fs.PathError's layer, whose text repeats a path
// the caller names already.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
