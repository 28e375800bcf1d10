package salsa20_test

import (
	"encoding/hex"
	"fmt"

	"github.com/spipe-dev/spipe/pkg/salsa20"
)

// XSalsa20 (a 24-byte nonce, safe to choose at random): the first 16 bytes
// of key stream for key 00 01 ... 1f and the nonce below, as
// golang.org/x/crypto/salsa20 also gives them.
func ExampleNewUnauthenticatedCipher() {
	key := make([]byte, salsa20.KeySize)
	for i := range key {
		key[i] = byte(i)
	}
	c, err := salsa20.NewUnauthenticatedCipher(key, []byte("24-byte nonce for xsalsa"))
	if err != nil {
		panic(err)
	}
	stream := make([]byte, 16)
	c.XORKeyStream(stream, stream)
	fmt.Println(hex.EncodeToString(stream))
	// Output:
	// c744f0b3848bcf64318cbf8cf22fed7a
}

// Random access by block: SetCounter(n) starts at byte 64*n of the key
// stream, so block 1000 costs no more than block 0. Never move back to
// encrypt new data: that reuses key stream.
func ExampleCipher_SetCounter() {
	key := make([]byte, salsa20.KeySize)
	nonce := make([]byte, salsa20.NonceSize)
	msg := make([]byte, 1001*salsa20.BlockSize)
	copy(msg[1000*salsa20.BlockSize:], "block one thousand")

	enc, err := salsa20.NewUnauthenticatedCipher(key, nonce)
	if err != nil {
		panic(err)
	}
	enc.XORKeyStream(msg, msg)

	dec, err := salsa20.NewUnauthenticatedCipher(key, nonce)
	if err != nil {
		panic(err)
	}
	dec.SetCounter(1000)
	block := msg[1000*salsa20.BlockSize:]
	dec.XORKeyStream(block, block)
	fmt.Printf("%s\n", block[:18])
	// Output:
	// block one thousand
}
