package sealed_test

import (
	"crypto/sha256"
	"encoding/binary"

	"github.com/spipe-dev/spipe/internal/testutil"
)

// The invalid files of testdata/file-v1/invalid.json: each is a file that
// docs/FILE.md says an opener must refuse, the secret to open it with,
// and the error section 5.3 names, with the failing chunk for a reader of
// the stream (section 5.2) and for a reader with random access, which
// opens the final chunk first.
type (
	invalidCase struct {
		Name        string       `json:"name"`
		Description string       `json:"description"`
		KeyFile     testutil.Hex `json:"key_file,omitempty"`
		Passphrase  string       `json:"passphrase,omitempty"`
		File        testutil.Hex `json:"file"`
		Error       string       `json:"error"`
		// Chunk is the chunk a stream reader fails at, RandomAccessChunk
		// the one a random-access reader fails at; nil for the header.
		Chunk             *uint64 `json:"chunk"`
		RandomAccessChunk *uint64 `json:"random_access_chunk"`
	}
	invalidFile struct {
		Description string        `json:"description"`
		Cases       []invalidCase `json:"cases"`
	}
)

func chunkAt(i uint64) *uint64 { return &i }

// specInvalidFiles builds every invalid case from valid files made by
// specFile, changing them as each case says.
func specInvalidFiles() invalidFile {
	base := func(name string, size int, salt string) fileVector {
		return specFile(specInputs{name: name, suite: specSuites[0], chunkSize: specChunkSize,
			keyFile: specKeyFile, salt: specBytes(salt, 32), plaintext: specBytes("plaintext "+name, size)})
	}
	empty := base("invalid/empty", 0, "salt invalid/empty")
	one := base("invalid/one-byte", 1, "salt invalid/one-byte")
	three := base("invalid/three", 2560, "salt invalid/three") // chunks of 1024, 1024, 512
	two := base("invalid/two-full", 2048, "salt invalid/two-full")
	other := base("invalid/three", 2560, "salt invalid/other") // same key and plaintext, another salt
	pass := specFile(specInputs{name: "invalid/passphrase", suite: specSuites[0], chunkSize: specChunkSize,
		passphrase: specPassphrase, argon2: &specArgon2, salt: specBytes("salt invalid/passphrase", 32)})
	// Sealed with U+FB01, the fi ligature, which NFC keeps (NFKC would
	// make it "fi").
	ligature := specFile(specInputs{name: "invalid/ligature", suite: specSuites[0], chunkSize: specChunkSize,
		passphrase: "\ufb01sh", argon2: &specArgon2, salt: specBytes("salt invalid/ligature", 32)})

	chunk := func(v fileVector, i int) []byte {
		c := v.Chunks[i]
		return v.File[c.FileOffset : c.FileOffset+c.SealedLen]
	}
	cat := func(parts ...[]byte) []byte {
		var out []byte
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	flip := func(b []byte, at int) []byte {
		b = cat(b)
		b[at] ^= 0x01
		return b
	}
	// reheader changes header bytes and recomputes the checksum, as a
	// writer breaking the format (or an attacker) would.
	reheader := func(b []byte, change func(h []byte)) []byte {
		b = cat(b)
		change(b[:96])
		sum := sha256.Sum256(b[:88])
		copy(b[88:96], sum[:8])
		return b
	}
	// resealed makes a file whose chunks a key holder sealed against the
	// rules: chunk 0 of two full chunks' plaintext non-final, then an
	// empty final chunk 1.
	resealed := func() []byte {
		v := base("invalid/two-full", 1024, "salt invalid/resealed")
		nonce0 := make([]byte, 12)
		nonce1 := make([]byte, 12)
		nonce1[0], nonce1[8] = 1, 1
		return cat(v.Header, specSeal(specSuites[0], v.KPayload, nonce0, v.Plaintext),
			specSeal(specSuites[0], v.KPayload, nonce1, nil))
	}

	t0, t1, t2 := chunk(three, 0), chunk(three, 1), chunk(three, 2)
	key := func(c invalidCase) invalidCase {
		if c.Passphrase == "" && c.KeyFile == nil {
			c.KeyFile = specKeyFile
		}
		if c.RandomAccessChunk == nil {
			c.RandomAccessChunk = c.Chunk
		}
		return c
	}
	cases := []invalidCase{
		// The header (section 5.1).
		{Name: "empty-input", Description: "no bytes at all", File: []byte{}, Error: "ErrNotSealed"},
		{Name: "not-a-spipe-file", Description: "a text file", File: []byte("hello, this is not a spipe file at all\n"), Error: "ErrNotSealed"},
		{Name: "magic-prefix-only", Description: "the first 4 bytes of the magic", File: three.File[:4], Error: "ErrTruncated"},
		{Name: "header-cut", Description: "the first 60 bytes of a header", File: three.File[:60], Error: "ErrTruncated"},
		{Name: "version-0", Description: "version byte 0 (one bit flipped)", File: flip(three.File, 8), Error: "ErrUnsupportedVersion"},
		{Name: "version-2", Description: "version byte 2, checksum recomputed", File: reheader(three.File, func(h []byte) { h[8] = 2 }), Error: "ErrUnsupportedVersion"},
		{Name: "version-255", Description: "version byte 255", File: reheader(three.File, func(h []byte) { h[8] = 0xff }), Error: "ErrUnsupportedVersion"},
		{Name: "damaged-salt", Description: "one bit of the salt flipped", File: flip(three.File, 30), Error: "ErrDamagedHeader"},
		{Name: "damaged-mac", Description: "one bit of the MAC flipped", File: flip(three.File, 60), Error: "ErrDamagedHeader"},
		{Name: "damaged-checksum", Description: "one bit of the checksum flipped", File: flip(three.File, 95), Error: "ErrDamagedHeader"},
		{Name: "damaged-suite", Description: "one bit of the suite flipped (1 to 0), checksum not recomputed", File: flip(three.File, 9), Error: "ErrDamagedHeader"},
		{Name: "unknown-suite", Description: "suite 7, checksum recomputed", File: reheader(three.File, func(h []byte) { h[9] = 7 }), Error: "ErrMalformedHeader"},
		{Name: "suite-zero", Description: "suite 0, checksum recomputed", File: reheader(three.File, func(h []byte) { h[9] = 0 }), Error: "ErrMalformedHeader"},
		{Name: "unknown-key-kind", Description: "key kind 3, checksum recomputed", File: reheader(three.File, func(h []byte) { h[10] = 3 }), Error: "ErrMalformedHeader"},
		{Name: "chunk-size-not-power-of-two", Description: "chunk size 1000, checksum recomputed", File: reheader(three.File, func(h []byte) { binary.BigEndian.PutUint32(h[12:], 1000) }), Error: "ErrMalformedHeader"},
		{Name: "chunk-size-too-small", Description: "chunk size 512, checksum recomputed", File: reheader(three.File, func(h []byte) { binary.BigEndian.PutUint32(h[12:], 512) }), Error: "ErrMalformedHeader"},
		{Name: "chunk-size-too-large", Description: "chunk size 32 MiB, checksum recomputed", File: reheader(three.File, func(h []byte) { binary.BigEndian.PutUint32(h[12:], 1<<25) }), Error: "ErrMalformedHeader"},
		{Name: "kdf-parameters-with-key", Description: "a key file's header with Argon2id memory set, checksum recomputed", File: reheader(three.File, func(h []byte) { binary.BigEndian.PutUint32(h[20:], 8192) }), Error: "ErrMalformedHeader"},
		{Name: "argon2-memory-too-large", Description: "a passphrase header asking for 2 GiB, checksum recomputed", Passphrase: specPassphrase, File: reheader(pass.File, func(h []byte) { binary.BigEndian.PutUint32(h[20:], 2<<20) }), Error: "ErrMalformedHeader"},
		{Name: "argon2-no-passes", Description: "a passphrase header with 0 passes, checksum recomputed", Passphrase: specPassphrase, File: reheader(pass.File, func(h []byte) { binary.BigEndian.PutUint32(h[16:], 0) }), Error: "ErrMalformedHeader"},
		{Name: "argon2-too-many-lanes", Description: "a passphrase header with 17 lanes, checksum recomputed", Passphrase: specPassphrase, File: reheader(pass.File, func(h []byte) { h[11] = 17 }), Error: "ErrMalformedHeader"},
		{Name: "wrong-key", Description: "opened with another key file", KeyFile: specOtherKeyFile, File: three.File, Error: "ErrWrongKey"},
		{Name: "wrong-passphrase", Description: "opened with another passphrase", Passphrase: "correct horse battery stapler", File: pass.File, Error: "ErrWrongKey"},
		{Name: "passphrase-file-opened-with-key", Description: "a passphrase file opened with a key file", File: pass.File, Error: "ErrWrongKey"},
		{Name: "key-file-opened-with-passphrase", Description: "a key file's file opened with a passphrase", Passphrase: specPassphrase, File: three.File, Error: "ErrWrongKey"},
		{Name: "passphrase-compatibility-form", Description: "sealed with the passphrase U+FB01 (the fi ligature) then \"sh\", opened with \"fish\": section 1.2 applies NFC, which keeps the ligature, not NFKC", Passphrase: "fish", File: ligature.File, Error: "ErrWrongKey"},
		{Name: "suite-downgraded", Description: "suite changed to chacha8-poly1305, checksum recomputed: the MAC fails", File: reheader(three.File, func(h []byte) { h[9] = 5 }), Error: "ErrWrongKey"},
		{Name: "chunk-size-changed", Description: "chunk size changed to 2048, checksum recomputed: the MAC fails", File: reheader(three.File, func(h []byte) { binary.BigEndian.PutUint32(h[12:], 2048) }), Error: "ErrWrongKey"},

		// Modified chunks, at every position.
		{Name: "modified-first-chunk", Description: "one ciphertext bit of chunk 0 of 3 flipped", File: flip(three.File, 96+10), Error: "ErrTampered", Chunk: chunkAt(0)},
		{Name: "modified-middle-chunk", Description: "one ciphertext bit of chunk 1 of 3 flipped", File: flip(three.File, 96+1040+10), Error: "ErrTampered", Chunk: chunkAt(1)},
		{Name: "modified-middle-tag", Description: "one tag bit of chunk 1 of 3 flipped", File: flip(three.File, 96+2*1040-1), Error: "ErrTampered", Chunk: chunkAt(1)},
		{Name: "modified-final-chunk", Description: "one ciphertext bit of chunk 2 of 3 (the final, short one) flipped", File: flip(three.File, 96+2*1040+10), Error: "ErrTampered", Chunk: chunkAt(2)},
		{Name: "modified-final-full-chunk", Description: "one ciphertext bit of chunk 1 of 2 (the final, full one) flipped", File: flip(two.File, 96+1040+10), Error: "ErrTampered", Chunk: chunkAt(1)},
		{Name: "modified-only-chunk", Description: "the one-byte file's only chunk, its ciphertext byte flipped", File: flip(one.File, 96), Error: "ErrTampered", Chunk: chunkAt(0)},
		{Name: "modified-empty-file", Description: "the empty file's only chunk (a tag) with a bit flipped", File: flip(empty.File, 100), Error: "ErrTampered", Chunk: chunkAt(0)},

		// Truncation.
		{Name: "cut-after-middle-chunk", Description: "chunk 2 of 3 dropped: the file ends after chunk 1, sealed as non-final", File: cat(three.Header, t0, t1), Error: "ErrTruncated", Chunk: chunkAt(1)},
		{Name: "cut-after-first-chunk", Description: "the file ends after chunk 0 of 3", File: cat(three.Header, t0), Error: "ErrTruncated", Chunk: chunkAt(0)},
		{Name: "cut-after-header", Description: "the empty file without its chunk: a header alone", File: empty.Header, Error: "ErrTruncated", Chunk: chunkAt(0)},
		{Name: "cut-inside-empty-files-chunk", Description: "the empty file cut 10 bytes into its only chunk (a tag)", File: empty.File[:96+10], Error: "ErrTruncated", Chunk: chunkAt(0)},
		{Name: "cut-inside-final-chunk", Description: "the last 10 bytes of chunk 2 of 3 cut", File: three.File[:len(three.File)-10], Error: "ErrTampered", Chunk: chunkAt(2)},
		{Name: "cut-inside-middle-chunk", Description: "the file cut 500 bytes into chunk 1 of 3", File: cat(three.Header, t0, t1[:500]), Error: "ErrTampered", Chunk: chunkAt(1)},
		{Name: "cut-inside-tag", Description: "the file cut 10 bytes into chunk 1 of 3, too few for a tag", File: cat(three.Header, t0, t1[:10]), Error: "ErrTruncated", Chunk: chunkAt(1)},
		{Name: "cut-to-a-tag", Description: "the file cut 16 bytes into chunk 1 of 3: an empty final chunk after chunk 0", File: cat(three.Header, t0, t1[:16]), Error: "ErrTruncated", Chunk: chunkAt(1)},
		{Name: "empty-final-chunk-after-chunk-0", Description: "a key holder's file: a full non-final chunk 0, then an authentic empty final chunk, which no writer may make", File: resealed(), Error: "ErrTruncated", Chunk: chunkAt(1)},

		// Reordered, dropped, duplicated, swapped chunks.
		{Name: "dropped-first-chunk", Description: "chunk 0 of 3 dropped", File: cat(three.Header, t1, t2), Error: "ErrTampered", Chunk: chunkAt(0), RandomAccessChunk: chunkAt(1)},
		{Name: "dropped-middle-chunk", Description: "chunk 1 of 3 dropped", File: cat(three.Header, t0, t2), Error: "ErrTampered", Chunk: chunkAt(1)},
		{Name: "reordered-chunks", Description: "chunks 0 and 1 of 3 swapped", File: cat(three.Header, t1, t0, t2), Error: "ErrTampered", Chunk: chunkAt(0)},
		{Name: "duplicated-chunk", Description: "chunk 0 of 3 twice", File: cat(three.Header, t0, t0, t1, t2), Error: "ErrTampered", Chunk: chunkAt(1), RandomAccessChunk: chunkAt(3)},
		{Name: "chunk-from-another-file", Description: "chunk 1 replaced by chunk 1 of a file of the same key and plaintext but another salt", File: cat(three.Header, t0, chunk(other, 1), t2), Error: "ErrTampered", Chunk: chunkAt(1)},
		{Name: "header-from-another-file", Description: "another file's header (same key) before this file's chunks", File: cat(other.Header, t0, t1, t2), Error: "ErrTampered", Chunk: chunkAt(0), RandomAccessChunk: chunkAt(2)},

		// Appended data.
		{Name: "appended-after-full-final-chunk", Description: "100 bytes after the final, full chunk 1 of 2", File: cat(two.File, specBytes("appended", 100)), Error: "ErrTrailingData", Chunk: chunkAt(1)},
		{Name: "appended-chunk", Description: "the file's own chunk 0 again after the final, full chunk 1 of 2", File: cat(two.File, chunk(two, 0)), Error: "ErrTrailingData", Chunk: chunkAt(1)},
		{Name: "one-byte-after-full-final-chunk", Description: "1 byte after the final, full chunk 1 of 2: the chunks are judged in order, so chunk 1 (followed by bytes) opens only as final, before the byte is looked at", File: cat(two.File, []byte{0}), Error: "ErrTrailingData", Chunk: chunkAt(1)},
		{Name: "a-tag-after-full-final-chunk", Description: "16 bytes (an empty final chunk's size) after the final, full chunk 1 of 2: trailing data at chunk 1, not a truncated chunk 2", File: cat(two.File, specBytes("appended", 16)), Error: "ErrTrailingData", Chunk: chunkAt(1)},
		{Name: "appended-after-short-final-chunk", Description: "100 bytes after the final, short chunk 2 of 3: they join it, which cannot be told from damage", File: cat(three.File, specBytes("appended", 100)), Error: "ErrTampered", Chunk: chunkAt(2)},
		{Name: "appended-to-empty-file", Description: "1 byte after the empty file's chunk", File: cat(empty.File, []byte{0}), Error: "ErrTampered", Chunk: chunkAt(0)},
	}
	for i := range cases {
		cases[i] = key(cases[i])
	}
	return invalidFile{
		Description: "files an opener must refuse (docs/FILE.md section 5), built from valid files of chacha20-poly1305 in 1 KiB chunks; error is the section 5.3 name, chunk the failing chunk for a stream reader and random_access_chunk for a reader with random access (null: the header)",
		Cases:       cases,
	}
}
