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

// A secretbox (XSalsa20-Poly1305) is NaCl's crypto_secretbox: the box is
// tag || ciphertext, the 24-byte nonce may be random, and there is no
// additional data. Boxes open with x/crypto/nacl/secretbox and back.
func ExampleSecretbox() {
	key := make([]byte, aead.KeySize)
	rand.Read(key)
	box, err := aead.NewSecretbox(aead.XSalsa20Poly1305, key)
	if err != nil {
		panic(err)
	}
	var nonce [aead.NonceSizeX]byte
	rand.Read(nonce[:])
	sealed := box.Seal(nil, &nonce, []byte("attack at dawn"))
	fmt.Println(len(sealed) == aead.TagSize+len("attack at dawn"))
	msg, err := box.Open(nil, &nonce, sealed)
	fmt.Printf("%s %v\n", msg, err)
	sealed[0] ^= 1
	msg, err = box.Open(nil, &nonce, sealed)
	fmt.Printf("%q %v\n", msg, err)
	// Output:
	// true
	// attack at dawn <nil>
	// "" aead: message authentication failed
}

// Sealing in place: the message sits at buf[16:], where it is encrypted,
// and the tag goes in front; opening the box in place puts the message
// back where it was. Nothing is allocated or copied.
func ExampleSecretbox_inPlace() {
	box, err := aead.NewSecretbox(aead.XSalsa20Poly1305, make([]byte, aead.KeySize))
	if err != nil {
		panic(err)
	}
	var nonce [aead.NonceSizeX]byte // a counter or random in real use
	buf := make([]byte, aead.TagSize+5)
	copy(buf[aead.TagSize:], "hello")
	sealed := box.Seal(buf[:0], &nonce, buf[aead.TagSize:])
	msg, err := box.Open(sealed[aead.TagSize:aead.TagSize], &nonce, sealed)
	fmt.Printf("%s %v %v\n", msg, err, &msg[0] == &buf[aead.TagSize])
	// Output:
	// hello <nil> true
}

// A failed Open writes nothing: opening in place, the ciphertext is still
// there to log, drop or retry.
func ExampleNewChaCha20Poly1305_inPlace() {
	a, err := aead.NewChaCha20Poly1305(make([]byte, aead.KeySize))
	if err != nil {
		panic(err)
	}
	nonce := make([]byte, aead.NonceSize)
	buf := []byte("secret")
	sealed := a.Seal(buf[:0], nonce, buf, []byte("header"))
	before := string(sealed)
	_, err = a.Open(sealed[:0], nonce, sealed, []byte("tampered header"))
	fmt.Println(err, string(sealed) == before)
	msg, err := a.Open(sealed[:0], nonce, sealed, []byte("header"))
	fmt.Printf("%s %v\n", msg, err)
	// Output:
	// aead: message authentication failed true
	// secret <nil>
}

// Suites by name, as a command line or configuration file gives them.
func ExampleParseSuite() {
	for _, name := range []string{"ChaCha20-Poly1305", "xchacha20", "secretbox"} {
		s, err := aead.ParseSuite(name)
		fmt.Println(s, uint8(s), s.NonceSize(), s.Secretbox(), err)
	}
	_, err := aead.ParseSuite("aes-gcm")
	fmt.Println(err != nil)
	// Output:
	// chacha20-poly1305 1 12 false <nil>
	// xchacha20-poly1305 2 24 false <nil>
	// xsalsa20-poly1305 3 24 true <nil>
	// true
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
	// chacha20-poly1305 false 12 16
	// chacha8-poly1305 true 12 16
}
