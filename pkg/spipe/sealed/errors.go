package sealed

import (
	"errors"
	"fmt"
)

// Errors of opening a file. Every failure wraps exactly one of them, so
// callers (the spipe tool maps them to exit statuses) tell the cases
// apart with errors.Is; a failure inside the payload is also a
// *ChunkError naming the chunk.
var (
	// ErrNotSealed: the input does not start with the magic of a spipe
	// file (it is empty, or another kind of file).
	ErrNotSealed = errors.New("not a spipe sealed file")

	// ErrUnsupportedVersion: a spipe file of a format version this
	// package does not read.
	ErrUnsupportedVersion = errors.New("unsupported spipe file version")

	// ErrDamagedHeader: the header's checksum does not match: its bytes
	// were changed after it was written (damage, not a wrong key). The
	// checksum is unkeyed, so it catches accidents only: a header altered
	// on purpose, its checksum recomputed, passes it and fails the MAC
	// (ErrWrongKey) instead.
	ErrDamagedHeader = errors.New("damaged header (checksum mismatch)")

	// ErrMalformedHeader: an intact header whose fields break the format
	// (unknown suite or key kind, chunk size or KDF parameters outside
	// their limits). Only a non-conforming writer makes one.
	ErrMalformedHeader = errors.New("malformed header")

	// ErrWrongKey: the header's checksum matches but its MAC does not
	// verify under the key or passphrase given, or the header says the
	// file was sealed with the other kind of secret (a passphrase for a
	// key, or the reverse). That is what another secret gives; it is also
	// what a header deliberately altered (a field changed, the unkeyed
	// checksum recomputed) gives under the right secret, and the error's
	// text says both.
	ErrWrongKey = errors.New("wrong key")

	// ErrArgon2Ceiling: a passphrase file whose header asks Argon2id for
	// more memory, passes or lanes than the opener allows
	// (Options.Argon2Ceiling, DefaultArgon2Ceiling unless raised). The
	// parameters are within the format's limits, so the file may be
	// genuine, sealed with costlier settings; Argon2id did not run.
	ErrArgon2Ceiling = errors.New("the file's Argon2id parameters are above this opener's ceiling")

	// ErrTampered: a chunk failed authentication: it was modified, moved,
	// duplicated or taken from another file. No byte of it is returned.
	ErrTampered = errors.New("chunk failed authentication (damaged, reordered, or from another file)")

	// ErrTruncated: the file ends early: inside the header, inside a
	// chunk, or after a chunk that is not the final one.
	ErrTruncated = errors.New("file cut short")

	// ErrTrailingData: bytes follow the final chunk (appended data).
	ErrTrailingData = errors.New("data after the final chunk")
)

// ChunkError is a failure of one chunk: which chunk, where its sealed
// bytes start in the file, and why (it wraps ErrTampered, ErrTruncated,
// ErrTrailingData or the underlying read error).
type ChunkError struct {
	Index  uint64 // the chunk's number, from 0
	Offset int64  // the byte offset of its sealed bytes in the file
	Err    error
}

func (e *ChunkError) Error() string {
	return fmt.Sprintf("sealed: chunk %d (at byte %d): %v", e.Index, e.Offset, e.Err)
}

func (e *ChunkError) Unwrap() error { return e.Err }

// chunkOffset is where chunk i's sealed bytes start in a file with chunks
// of chunkSize.
func chunkOffset(i uint64, chunkSize int) int64 {
	return HeaderSize + int64(i)*(int64(chunkSize)+TagSize)
}
