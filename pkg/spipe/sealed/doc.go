// Package sealed reads and writes spipe files: files encrypted and
// authenticated at rest under a spipe key file or a passphrase, in
// fixed-size chunks that each open on their own, so any byte range is read
// without the rest and every core seals and opens at once.
// docs/FILE.md is the format's specification, and testdata/file-v1 its
// vectors; `spipe seal` and `spipe open` are the tool.
//
// # Use
//
// A file is sealed under a [Secret]: [Key] of a key file loaded with
// [spipe.LoadKeyFile] (or made with [spipe.WriteKeyFile]), or
// [Passphrase]. [NewWriter] seals what is written to it (an
// io.WriteCloser: Close seals the final chunk). [NewReader] opens a file
// as a stream (an io.Reader). [NewReaderAt] opens any range of a file
// held by an io.ReaderAt, knowing its size; it is an io.ReaderAt itself,
// with [ReaderAt.Size], so io.NewSectionReader, http.ServeContent and
// archive/zip.NewReader work on encrypted files directly.
//
// # Guarantees
//
//   - Readers return only authenticated plaintext: each chunk's tag is
//     checked over the whole chunk before any byte of it is returned.
//   - A file that was modified, cut short, extended, or whose chunks were
//     reordered, dropped, duplicated or taken from another file fails, with
//     an error that says which ([ErrTampered], [ErrTruncated],
//     [ErrTrailingData], in a [*ChunkError] naming the chunk). A wrong key
//     ([ErrWrongKey]) is told from accidental damage to the header
//     ([ErrDamagedHeader]) and from other files ([ErrNotSealed],
//     [ErrUnsupportedVersion]). The header's checksum is unkeyed: a header
//     altered on purpose, its checksum recomputed, fails as ErrWrongKey
//     under the right key too, and the error says so.
//   - Every file has its own keys, derived from the secret and a random
//     salt, so chunks are worthless in any other file; a file opens under
//     exactly one secret.
//   - Memory is bounded for any input: a Writer or Reader holds
//     2 × Workers + 1 chunk buffers, a ReaderAt one per concurrent
//     ReadAt; chunks are at most [MaxChunkSize]. A hostile header cannot
//     make a Reader run Argon2id above [DefaultArgon2Ceiling] (256 MiB, 8
//     passes) unless [Options].Argon2Ceiling raises it, and never above
//     the format's limits ([MaxArgon2MemoryKiB], [MaxArgon2Time]).
//   - Sealing and opening allocate nothing per chunk.
//
// # What it does not hide
//
// A file's size (so its plaintext's), suite and chunk size are visible.
// Replacing a whole file with another file sealed under the same secret
// (an older version, say) is not detected: bind names and versions inside
// the plaintext when that matters.
package sealed
