// Package testutil holds the few helpers the cipher tests share: loading the
// external vectors under testdata/vectors, hex-typed JSON fields for them,
// the layouts of the vector files more than one package reads
// (vectorfiles.go), seeded randomness, a CPU-time benchmark timer and a
// log a test can wait on (Log). It is imported only by _test.go files. The
// shared suites live below it: streamtest for the stream cipher packages,
// kerneltest for the cores' block kernels, pipetest for the pipe's
// services.
//
// Vector structs declare their fields with [Hex] and [Word], so a malformed
// vector file fails the JSON decoding, and with it the test, instead of
// turning into an empty expected value that could pass by accident.
package testutil

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// Hex is a byte string written in JSON as a hex string ("00ff…").
type Hex []byte

// UnmarshalJSON decodes a JSON hex string.
func (h *Hex) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	v, err := hex.DecodeString(s)
	if err != nil {
		return fmt.Errorf("hex field %.16q: %w", s, err)
	}
	*h = v
	return nil
}

// MarshalJSON encodes h as a JSON hex string, so files written from Hex
// fields read back the same.
func (h Hex) MarshalJSON() ([]byte, error) { return json.Marshal(hex.EncodeToString(h)) }

// Word is a 32-bit word written in JSON as exactly 8 hex digits giving its
// value (big-endian text, "61707865"), as the vector files' round-function
// examples do.
type Word uint32

// UnmarshalJSON decodes a JSON string of 8 hex digits.
func (w *Word) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	if len(s) != 8 {
		return fmt.Errorf("word %q: need 8 hex digits", s)
	}
	v, err := strconv.ParseUint(s, 16, 32)
	if err != nil {
		return fmt.Errorf("word %q: %w", s, err)
	}
	*w = Word(v)
	return nil
}

// MustHex decodes a hex literal written in a test, failing the test if it
// is malformed.
func MustHex(tb testing.TB, s string) []byte {
	tb.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		tb.Fatalf("bad hex literal %.16q: %v", s, err)
	}
	return b
}

// LoadVectors decodes testdata/vectors/name (found from the module root)
// into v, rejecting unknown fields so that a renamed field cannot silently
// leave expected values empty. It fails the test on any error.
func LoadVectors(tb testing.TB, name string, v any) {
	tb.Helper()
	root, err := moduleRoot()
	if err != nil {
		tb.Fatal(err)
	}
	f, err := os.Open(filepath.Join(root, "testdata", "vectors", name))
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	dec := json.NewDecoder(f)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		tb.Fatalf("testdata/vectors/%s: %v", name, err)
	}
}

// moduleRoot walks up from the working directory (the package directory
// under go test) to the directory holding go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("testutil: no go.mod above the working directory")
		}
		dir = parent
	}
}

// Rand returns a generator seeded from the test's name, so a failing
// randomized test replays the same inputs on the next run. Set
// SPIPE_TEST_SEED to an integer to explore other inputs; the seed in use is
// logged.
func Rand(tb testing.TB) *rand.Rand {
	tb.Helper()
	h := fnv.New64a()
	h.Write([]byte(tb.Name()))
	seed := h.Sum64()
	if s := os.Getenv("SPIPE_TEST_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 0, 64)
		if err != nil {
			tb.Fatalf("SPIPE_TEST_SEED=%q: %v", s, err)
		}
		seed ^= v
	}
	tb.Logf("random seed %#x", seed)
	return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
}

// Bytes returns n bytes from r.
func Bytes(r *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}
