// Package faultproxy is a TCP proxy for tests that sits between a spipe
// client and a spipe server, parses the protocol's units (handshake
// messages, then frames, per docs/PROTOCOL.md) in each direction, and
// applies chosen faults to chosen units: flip a bit, drop, duplicate,
// reorder, delay, truncate, or reset the connection. Everything else is
// forwarded unchanged, one unit per write.
//
// It is a test helper: it trusts nothing it reads (a header announcing more
// than the protocol allows switches the direction to a plain byte copy) but
// it is not meant to be fast.
package faultproxy

import (
	"fmt"
	"time"
)

// Direction is one way through the proxy.
type Direction int

const (
	// ClientToServer carries ClientHello, ClientFinished, then the
	// client's frames.
	ClientToServer Direction = iota
	// ServerToClient carries ServerHello, then the server's frames.
	ServerToClient
)

// String returns "c2s" or "s2c".
func (d Direction) String() string {
	if d == ClientToServer {
		return "c2s"
	}
	return "s2c"
}

// Kind is what a fault does to its unit.
type Kind int

const (
	// FlipBit forwards the unit with bit Fault.Bit flipped.
	FlipBit Kind = iota + 1
	// Drop does not forward the unit.
	Drop
	// Duplicate forwards the unit twice.
	Duplicate
	// Reorder holds the unit back and forwards it after the next one (or
	// at the end of the direction if none follows).
	Reorder
	// Delay forwards the unit (and so everything after it) Fault.Delay
	// late; the stream itself is unchanged.
	Delay
	// Truncate forwards the first Fault.Keep bytes of the unit, then ends
	// the direction with a FIN (a clean TCP close) and discards the rest.
	// Keep 0 cuts at the unit boundary.
	Truncate
	// Reset resets both TCP connections (RST) instead of forwarding the
	// unit.
	Reset
)

var kindNames = map[Kind]string{
	FlipBit: "flip-bit", Drop: "drop", Duplicate: "duplicate", Reorder: "reorder",
	Delay: "delay", Truncate: "truncate", Reset: "reset",
}

// String returns the kind's name, such as "flip-bit".
func (k Kind) String() string {
	if s, ok := kindNames[k]; ok {
		return s
	}
	return fmt.Sprintf("kind(%d)", int(k))
}

// Fault is one change to one unit of one direction.
type Fault struct {
	Kind Kind
	Dir  Direction
	// Frame is the unit's index in Dir: frame numbers counted from 0 after
	// the handshake, or, with Handshake set, the handshake message (c2s: 0
	// ClientHello, 1 ClientFinished; s2c: 0 ServerHello).
	Frame     int
	Handshake bool
	// Bit is the bit FlipBit flips, counted from the unit's first byte
	// (bit 0 is the low bit of byte 0); it wraps around the unit's size,
	// and a negative value counts from the end.
	Bit int
	// Keep is how many bytes of the unit Truncate forwards (wrapped modulo
	// the unit's size).
	Keep int
	// Delay is how long Delay holds the unit.
	Delay time.Duration
}

// String describes the fault, e.g. "flip-bit c2s frame 3 bit 77".
func (f Fault) String() string {
	unit := "frame"
	if f.Handshake {
		unit = "handshake message"
	}
	s := fmt.Sprintf("%s %s %s %d", f.Kind, f.Dir, unit, f.Frame)
	switch f.Kind {
	case FlipBit:
		s += fmt.Sprintf(" bit %d", f.Bit)
	case Truncate:
		s += fmt.Sprintf(" keep %d", f.Keep)
	case Delay:
		s += fmt.Sprintf(" by %v", f.Delay)
	}
	return s
}

func (f Fault) matches(d Direction, handshake bool, index int) bool {
	return f.Dir == d && f.Handshake == handshake && f.Frame == index
}
