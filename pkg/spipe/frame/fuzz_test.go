package frame

import (
	"bytes"
	"testing"

	"github.com/spipe-dev/spipe/pkg/aead"
)

// FuzzOpen: Open never panics on arbitrary input, under a key the input
// was made with or not, and whatever it accepts seals back to the same
// bytes (resealing with a pad unit of the inner plaintext's own size
// reproduces its padding exactly).
func FuzzOpen(f *testing.F) {
	key := bytes.Repeat([]byte{7}, aead.KeySize)
	for _, suite := range aead.Suites() {
		c, err := NewCipher(suite, key)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(uint8(suite), uint64(0), c.Seal(nil, 0, Data, []byte("seed"), 0))
		f.Add(uint8(suite), uint64(1), c.Seal(nil, 1, CloseWrite, nil, 64))
		f.Add(uint8(suite), uint64(2), sealInner(c, 2, []byte{0, 0}))
		f.Add(uint8(suite), uint64(3), c.Seal(nil, 3, StreamData, []byte{'h', 'i', 0, 0, 0, 5}, 0))
		f.Add(uint8(suite), uint64(4), c.Seal(nil, 4, StreamCredit, []byte{0, 0, 0, 1, 0, 0, 1, 0}, 64))
	}
	f.Add(uint8(1), uint64(0), []byte{0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, s uint8, counter uint64, frame []byte) {
		suite := aead.Suite(s%6 + 1)
		c, err := NewCipher(suite, key)
		if err != nil {
			t.Fatal(err)
		}
		typ, data, err := c.Open(nil, frame, counter)
		if err != nil {
			if data != nil || typ != 0 {
				t.Fatalf("failed Open returned type %v and %d bytes", typ, len(data))
			}
			return
		}
		n := len(frame) - Overhead
		again := c.Seal(nil, counter, typ, data, n)
		if !bytes.Equal(again, frame) {
			t.Fatalf("accepted frame does not reseal to itself")
		}
	})
}
