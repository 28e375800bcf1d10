package spipe

import "github.com/spipe-dev/spipe/pkg/spipe/frame"

// Each direction's frames go through one of two buffers, its tiers.
//
// The small tier holds frames of up to DefaultMaxPayload. Every connection
// that sends or receives takes one, and it is all that interactive
// traffic ever uses.
//
// The big tier holds this side's largest frame (Config.MaxPayload, when
// that is larger). A sender takes it once two reads in a row from its
// source have filled a whole small frame, which means more is queued; a
// receiver takes it for a frame the small buffer cannot hold. Both give it back as
// soon as their stream looks paused: a read that returned less than it
// asked for emptied the socket. So a connection that waits for data holds
// only its small buffers, and a bulk transfer runs on large frames, which
// take far fewer system calls, wake-ups and context switches per byte than
// 64 KiB ones (docs/PIPE.md has the figures).

// smallPayload is the inner plaintext of a small-tier frame on a side whose
// own limit is limit and that pads to padTo: DefaultMaxPayload, less when
// the limit is lower, or the whole limit when one padded unit would not
// fit in DefaultMaxPayload.
func smallPayload(limit, padTo int) int {
	if padTo > DefaultMaxPayload {
		return limit
	}
	return min(limit, DefaultMaxPayload)
}

// readBufSize is the length of a receive buffer for frames of up to payload
// bytes of inner plaintext: one such frame and the read-ahead.
func readBufSize(payload int) int { return payload + frame.Overhead + readAhead }

// writeBufSize is the length of a send buffer for frames of up to payload
// bytes of inner plaintext.
func writeBufSize(payload int) int { return payload + frame.Overhead }

// dataCap is how many data bytes one frame sealed in a send buffer of
// length bufLen carries: as many as the buffer has room for, after the
// header, type byte, padding and tag, and no more than the peer's limit
// allows.
func (out *outbound) dataCap(bufLen int) int {
	room := bufLen - frame.Overhead
	if out.padTo > 0 {
		room = room / out.padTo * out.padTo
	}
	return min(out.maxData, room-1)
}

// bigTier reports whether frames sent through the big tier carry more
// data than small-tier ones: not when the peer's limit, or this side's,
// is no larger than a small frame.
func (out *outbound) bigTier() bool {
	return out.dataCap(out.bigSize) > out.dataCap(out.smallSize)
}
