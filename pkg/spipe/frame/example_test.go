package frame_test

import (
	"bytes"
	"fmt"

	"github.com/spipe-dev/spipe/pkg/aead"
	"github.com/spipe-dev/spipe/pkg/spipe/frame"
)

// Example_randomAccess records a stream of 100 frames and opens frame 42
// alone: the cleartext lengths locate it and its number is its nonce, so
// nothing of frames 0..41 is decrypted.
func Example_randomAccess() {
	key := bytes.Repeat([]byte{0x42}, aead.KeySize) // a direction key; use a random one
	sender, err := frame.NewCipher(aead.ChaCha20Poly1305, key)
	if err != nil {
		panic(err)
	}
	var recording []byte
	for i := range 100 {
		msg := fmt.Sprintf("record %d", i)
		recording = sender.Seal(recording, uint64(i), frame.Data, []byte(msg), 0)
	}

	// Skip to frame 42 by its headers alone.
	off := 0
	for range 42 {
		size, err := frame.Size(recording[off:])
		if err != nil {
			panic(err)
		}
		off += size
	}
	size, err := frame.Size(recording[off:])
	if err != nil {
		panic(err)
	}

	reader, err := frame.NewCipher(aead.ChaCha20Poly1305, key)
	if err != nil {
		panic(err)
	}
	typ, data, err := reader.Open(nil, recording[off:off+size], 42)
	fmt.Printf("%s frame: %q, err=%v\n", typ, data, err)
	_, _, err = reader.Open(nil, recording[off:off+size], 41)
	fmt.Println("as frame 41:", err)
	// Output:
	// data frame: "record 42", err=<nil>
	// as frame 41: frame failed authentication (tampered, reordered, dropped or duplicated)
}
