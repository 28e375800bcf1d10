package aead_test

import (
	"crypto/rand"
	"fmt"

	"github.com/spipe-dev/spipe/pkg/aead"
)

// Messages of a stream numbered 0, 1, 2, … under one key, each sealed with
// its number as the nonce, so that any of them opens on its own.
func Example_counterNonces() {
	key := make([]byte, aead.KeySize)
	rand.Read(key)
	a, err := aead.NewChaCha20Poly1305(key)
	if err != nil {
		panic(err)
	}

	var nonce [aead.NonceSize]byte
	header := []byte{1, 0, 5} // authenticated, not encrypted
	var boxes [][]byte
	for i, msg := range []string{"hello", "world"} {
		aead.PutCounterNonce(nonce[:], uint64(i))
		boxes = append(boxes, a.Seal(nil, nonce[:], []byte(msg), header))
	}

	aead.PutCounterNonce(nonce[:], 1)
	msg, err := a.Open(nil, nonce[:], boxes[1], header)
	fmt.Printf("%s %v\n", msg, err)
	_, err = a.Open(nil, nonce[:], boxes[0], header) // wrong counter
	fmt.Println(err)
	// Output:
	// world <nil>
	// aead: message authentication failed
}

// XSalsa20-Poly1305 boxes are NaCl secretboxes: tag || ciphertext, with a
// random 24-byte nonce and no additional data.
func ExampleNewXSalsa20Poly1305() {
	key := make([]byte, aead.KeySize)
	rand.Read(key)
	box, err := aead.NewXSalsa20Poly1305(key)
	if err != nil {
		panic(err)
	}
	nonce := make([]byte, aead.NonceSizeX)
	rand.Read(nonce)
	sealed := box.Seal(nil, nonce, []byte("attack at dawn"), nil)
	fmt.Println(len(sealed) == aead.TagSize+len("attack at dawn"))
	msg, err := box.Open(nil, nonce, sealed, nil)
	fmt.Printf("%s %v\n", msg, err)
	// Output:
	// true
	// attack at dawn <nil>
}

// The reduced-round suites are reached only through New, by name.
func ExampleNew() {
	key := make([]byte, aead.KeySize)
	for _, s := range []aead.Suite{aead.ChaCha20Poly1305, aead.ChaCha8Poly1305} {
		a, err := aead.New(s, key)
		if err != nil {
			panic(err)
		}
		fmt.Println(s, s.Reduced(), a.NonceSize(), a.Overhead())
	}
	// Output:
	// ChaCha20-Poly1305 false 12 16
	// ChaCha8-Poly1305 true 12 16
}
