package chacha20_test

import (
	"encoding/hex"
	"fmt"

	"github.com/spipe-dev/spipe/pkg/chacha20"
)

// The example of RFC 8439 section 2.4.2: ChaCha20 with a 12-byte nonce,
// starting at block 1 (block 0 is what the AEAD construction takes for its
// Poly1305 key). The first and last 16 bytes match the RFC's ciphertext.
func ExampleNewUnauthenticatedCipher() {
	key := make([]byte, chacha20.KeySize)
	for i := range key {
		key[i] = byte(i) // 00 01 02 ... 1f, as in the RFC
	}
	nonce, _ := hex.DecodeString("000000000000004a00000000")
	c, err := chacha20.NewUnauthenticatedCipher(key, nonce)
	if err != nil {
		panic(err)
	}
	c.SetCounter(1)
	msg := []byte("Ladies and Gentlemen of the class of '99: If I could offer you " +
		"only one tip for the future, sunscreen would be it.")
	c.XORKeyStream(msg, msg) // in place
	fmt.Println(hex.EncodeToString(msg[:16]))
	fmt.Println(hex.EncodeToString(msg[len(msg)-16:]))
	// Output:
	// 6e2e359a2568f98041ba0728dd0d6981
	// 0bbf74a35be6b40b8eedf2785e42874d
}

// Random access: any byte of a long ciphertext decrypts on its own, in
// constant time whatever its offset, without generating the key stream
// before it. Never seek back to encrypt new data: that reuses key stream.
func ExampleCipher_Seek() {
	key := make([]byte, chacha20.KeySize)
	nonce := make([]byte, chacha20.NonceSizeX) // XChaCha20: random nonces are safe
	record := []byte("header....|the part we want|....trailer")

	enc, err := chacha20.NewUnauthenticatedCipher(key, nonce)
	if err != nil {
		panic(err)
	}
	enc.XORKeyStream(record, record)

	dec, err := chacha20.NewUnauthenticatedCipher(key, nonce)
	if err != nil {
		panic(err)
	}
	part := append([]byte(nil), record[11:27]...)
	dec.Seek(11)
	dec.XORKeyStream(part, part)
	fmt.Printf("%s\n", part)
	// Output:
	// the part we want
}
