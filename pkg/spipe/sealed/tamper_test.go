package sealed_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/spipe-dev/spipe/pkg/spipe/sealed"
)

// TestTamperEveryPosition applies every tamper the format must detect at
// every chunk position class (first, middle, final, the only chunk, the
// empty file's chunk) and requires each reader to fail, having returned
// only a prefix of the plaintext: never a wrong byte. invalid.json pins
// the exact errors of the same classes; this covers the cross product.
func TestTamperEveryPosition(t *testing.T) {
	const cs = sealed.MinChunkSize
	s := testKey(t)
	bases := []struct {
		name string
		size int
	}{{"empty", 0}, {"only", 100}, {"short-final", 3*cs + 100}, {"full-final", 3 * cs}}
	for _, b := range bases {
		pt := plaintext(b.size, 7)
		file := seal(t, s, pt, &sealed.Options{ChunkSize: cs})
		other := seal(t, s, pt, &sealed.Options{ChunkSize: cs}) // same key and plaintext, another salt
		chunks := split(file, cs)
		otherChunks := split(other, cs)
		positions := map[string]int{"first": 0, "middle": len(chunks) / 2, "final": len(chunks) - 1}
		for pos, p := range positions {
			tampers := map[string][]byte{
				"modified":             join(file[:sealed.HeaderSize], replace(chunks, p, flipped(chunks[p]))...),
				"modified-tag":         join(file[:sealed.HeaderSize], replace(chunks, p, flippedAt(chunks[p], len(chunks[p])-1))...),
				"dropped":              join(file[:sealed.HeaderSize], remove(chunks, p)...),
				"duplicated":           join(file[:sealed.HeaderSize], insert(chunks, p, chunks[p])...),
				"from-another-file":    join(file[:sealed.HeaderSize], replace(chunks, p, otherChunks[p])...),
				"cut-inside":           join(file[:sealed.HeaderSize], append(chunks[:p:p], chunks[p][:len(chunks[p])/2])...),
				"appended-byte":        append(bytes.Clone(file), 0),
				"appended-chunk":       join(file, chunks[p]),
				"appended-other-final": join(file, otherChunks[len(otherChunks)-1]),
			}
			if p+1 < len(chunks) {
				tampers["swapped-with-next"] = join(file[:sealed.HeaderSize], swap(chunks, p, p+1)...)
				tampers["cut-after"] = join(file[:sealed.HeaderSize], chunks[:p+1]...)
			}
			for name, bad := range tampers {
				t.Run(fmt.Sprintf("%s/%s/%s", b.name, pos, name), func(t *testing.T) {
					for _, workers := range []int{1, 3} {
						got, err := openAll(t, s, bad, workers)
						require.Error(t, err, "stream reader, %d workers, accepted a tampered file", workers)
						assert.True(t, bytes.HasPrefix(pt, got), "stream reader returned bytes that are not the plaintext's")
					}
					got, err := openAt(t, s, bad)
					require.Error(t, err, "random access accepted a tampered file")
					assert.True(t, bytes.HasPrefix(pt, got))
					if ra, err := sealed.NewReaderAt(bytes.NewReader(bad), int64(len(bad)), s, &sealed.Options{Workers: 3}); err == nil {
						var b bytes.Buffer
						_, err := ra.WriteRangeTo(&b, 0, ra.Size())
						require.Error(t, err, "WriteRangeTo accepted a tampered file")
						assert.True(t, bytes.HasPrefix(pt, b.Bytes()))
					}
				})
			}
		}
	}
}

// split cuts a file's payload into its sealed chunks.
func split(file []byte, cs int) [][]byte {
	var out [][]byte
	for rest := file[sealed.HeaderSize:]; len(rest) > 0; {
		n := min(len(rest), cs+sealed.TagSize)
		out = append(out, rest[:n])
		rest = rest[n:]
	}
	return out
}

func join(head []byte, parts ...[]byte) []byte {
	out := bytes.Clone(head)
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

func flipped(c []byte) []byte { return flippedAt(c, 0) }

func flippedAt(c []byte, i int) []byte {
	c = bytes.Clone(c)
	c[i] ^= 0x80
	return c
}

func replace(cs [][]byte, i int, c []byte) [][]byte {
	out := append([][]byte{}, cs...)
	out[i] = c
	return out
}

func remove(cs [][]byte, i int) [][]byte {
	return append(append([][]byte{}, cs[:i]...), cs[i+1:]...)
}

func insert(cs [][]byte, i int, c []byte) [][]byte {
	out := append([][]byte{}, cs[:i+1]...)
	return append(append(out, c), cs[i+1:]...)
}

func swap(cs [][]byte, i, j int) [][]byte {
	out := append([][]byte{}, cs...)
	out[i], out[j] = out[j], out[i]
	return out
}

// TestAlteredHeaderIsNotOnlyAWrongKey: the checksum is unkeyed, so a
// header altered on purpose (its checksum recomputed) reaches the MAC and
// fails as ErrWrongKey under the right key. The error must say that it may
// be an altered header, not send the user looking for another secret.
func TestAlteredHeaderIsNotOnlyAWrongKey(t *testing.T) {
	s := testKey(t)
	file := seal(t, s, plaintext(3000, 1), &sealed.Options{ChunkSize: sealed.MinChunkSize})
	rechecksum := func(change func(h []byte)) []byte {
		b := bytes.Clone(file)
		change(b[:sealed.HeaderSize])
		sum := sha256.Sum256(b[:88])
		copy(b[88:96], sum[:8])
		return b
	}
	cases := map[string][]byte{
		"chunk size doubled": rechecksum(func(h []byte) { binary.BigEndian.PutUint32(h[12:], 2*sealed.MinChunkSize) }),
		// A key file's file relabelled as a passphrase's, with valid
		// Argon2id parameters: the kind check refuses the key.
		"relabelled as a passphrase's": rechecksum(func(h []byte) {
			h[10], h[11] = 2, 1
			binary.BigEndian.PutUint32(h[16:], 1)
			binary.BigEndian.PutUint32(h[20:], sealed.MinArgon2MemoryKiB)
		}),
	}
	for name, bad := range cases {
		_, err := openAll(t, s, bad, 1)
		require.ErrorIs(t, err, sealed.ErrWrongKey, name)
		assert.Contains(t, err.Error(), "altered on purpose", name)
	}
	_, err := openAll(t, s, cases["relabelled as a passphrase's"], 1)
	assert.Contains(t, err.Error(), "says the file is sealed with a passphrase")
}
