package sealed

import (
	"bytes"
	"testing"
)

// FuzzParseHeader: any bytes parse without panicking, and a header that
// parses is exactly what marshal writes for its fields (the parser
// accepts one encoding per header, and checks every byte it does not
// keep).
func FuzzParseHeader(f *testing.F) {
	var good [HeaderSize]byte
	(&Header{Suite: DefaultSuite, ChunkSize: DefaultChunkSize}).marshal(good[:])
	putChecksum(good[:])
	f.Add(good[:])
	var pass [HeaderSize]byte
	(&Header{Suite: 3, ChunkSize: MinChunkSize, Argon2: &DefaultArgon2}).marshal(pass[:])
	putChecksum(pass[:])
	f.Add(pass[:])
	f.Add(good[:40])
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := ParseHeader(b)
		if err != nil {
			return
		}
		var again [HeaderSize]byte
		h.marshal(again[:])
		if !bytes.Equal(again[:offMAC], b[:offMAC]) {
			t.Fatalf("header fields %x parse to %+v, which marshals to %x", b[:offMAC], h, again[:offMAC])
		}
	})
}
