package sealed

import (
	"fmt"
	"io"

	"github.com/spipe-dev/spipe/pkg/aead"
)

// Options tunes a Writer or a Reader. The zero value, or a nil *Options,
// gives the defaults. A Reader or ReaderAt uses Workers and Argon2Ceiling
// only: everything else is in the file's header.
type Options struct {
	// Suite seals the chunks: any suite of pkg/aead. Zero means
	// DefaultSuite.
	Suite aead.Suite
	// ChunkSize is the plaintext size of every chunk but the last: a
	// power of two from MinChunkSize to MaxChunkSize. Zero means
	// DefaultChunkSize.
	ChunkSize int
	// Argon2 are the passphrase KDF's parameters, for a Writer with a
	// passphrase Secret. Nil means DefaultArgon2.
	Argon2 *Argon2Params
	// Workers is how many goroutines seal or open chunks at once; the
	// output is in order whatever it is. Zero means runtime.GOMAXPROCS(0);
	// 1 does all the work in the caller's goroutine. A Writer or Reader
	// holds 2 × Workers + 1 chunk buffers, and nothing else that grows.
	Workers int
	// Argon2Ceiling is the most a Reader or ReaderAt lets a file's header
	// ask of Argon2id: a passphrase file that asks for more memory,
	// passes or lanes fails with ErrArgon2Ceiling before Argon2id runs.
	// Nil means DefaultArgon2Ceiling, and so does each zero field. Raise
	// it only for files whose source is trusted to be what it seems:
	// up to the format's limits (MaxArgon2MemoryKiB, MaxArgon2Time,
	// MaxArgon2Threads), a header alone makes the opener spend that much.
	// A Writer ignores it.
	Argon2Ceiling *Argon2Params

	// rand is where the salt comes from (crypto/rand when nil); the
	// vector tests set it.
	rand io.Reader
}

// withDefaults returns the options with every zero field set, checked.
func (o *Options) withDefaults() (Options, error) {
	var r Options
	if o != nil {
		r = *o
	}
	if r.Suite == 0 {
		r.Suite = DefaultSuite
	}
	if r.ChunkSize == 0 {
		r.ChunkSize = DefaultChunkSize
	}
	r.Workers = workerCount(r.Workers)
	switch cs := r.ChunkSize; {
	case !r.Suite.Valid():
		return r, fmt.Errorf("sealed: unknown suite %d", uint8(r.Suite))
	case cs < MinChunkSize || cs > MaxChunkSize || cs&(cs-1) != 0:
		return r, fmt.Errorf("sealed: chunk size %d is not a power of two from %d to %d", cs, MinChunkSize, MaxChunkSize)
	}
	if r.Argon2 == nil {
		r.Argon2 = &DefaultArgon2
	} else if err := r.Argon2.check(); err != nil {
		return r, fmt.Errorf("sealed: %w", err)
	}
	return r, nil
}

// argon2Ceiling returns the Argon2id ceiling o sets: DefaultArgon2Ceiling,
// with each field o sets in its place. o may be nil.
func (o *Options) argon2Ceiling() Argon2Params {
	c := DefaultArgon2Ceiling
	if o == nil || o.Argon2Ceiling == nil {
		return c
	}
	if v := o.Argon2Ceiling.Time; v != 0 {
		c.Time = v
	}
	if v := o.Argon2Ceiling.MemoryKiB; v != 0 {
		c.MemoryKiB = v
	}
	if v := o.Argon2Ceiling.Threads; v != 0 {
		c.Threads = v
	}
	return c
}
