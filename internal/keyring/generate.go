package keyring

import (
	"errors"
	"fmt"
	"io"
	"io/fs"

	"github.com/spipe-dev/spipe/pkg/spipe"
)

// Generate writes a new key file with spipe.WriteKeyFile (GeneratedKeyBytes
// random bytes as hex text and a newline, mode 0600, parents 0700, never
// half written) and returns the key. An existing path is an error naming
// --force unless force is set.
func Generate(path string, force bool) (*spipe.Key, error) {
	k, err := spipe.WriteKeyFile(path, force)
	if errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("key file %s exists (use --force to overwrite it)", path)
	}
	return k, err
}

// GenerateTo writes a new key's content to w (for "spipe keygen -") and
// returns the key.
func GenerateTo(w io.Writer) (*spipe.Key, error) {
	text, key := spipe.GenerateKey()
	defer clear(text)
	if _, err := w.Write(text); err != nil {
		return nil, fmt.Errorf("writing the key: %w", err)
	}
	return key, nil
}
