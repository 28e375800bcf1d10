package spec

import (
	"crypto/sha256"
	"fmt"
	"slices"

	"golang.org/x/crypto/curve25519"
)

// The session inputs every transcript shares; each varies the suite,
// forward secrecy, the context and padding.
var (
	VectorKeyFile = []byte("9a6f3c21d4e5b68a7c0d1e2f3a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d\n")
	VectorContext = "ssh to db.example.net:22"
)

// Traffic is one frame a session sends.
type Traffic struct {
	Dir, Type string
	Data      string
	Fields    map[string]uint64
}

// StreamTraffic is what each end of a mode-1 session sends, in order.
var StreamTraffic = []Traffic{
	{Dir: "c2s", Type: "data", Data: "hello, server"},
	{Dir: "s2c", Type: "data", Data: "hello, client"},
	{Dir: "c2s", Type: "keepalive"},
	{Dir: "c2s", Type: "data", Data: "data may end in zero bytes\x00\x00"},
	{Dir: "c2s", Type: "close-write"},
	{Dir: "s2c", Type: "close-write"},
}

// MuxTraffic is a mode-3 session (section 7): the client opens stream 1
// with its first data; the server answers on it, grants back what it read
// (13 bytes and the frame's charge of 64), and both end their directions;
// the client opens stream 2 without data, which the server refuses (a
// reset with code 1: it did nothing for the stream); the
// client pings and the server answers; then the server goes away (it
// served streams up to 2) and, with no stream open, each end sends its
// close-write.
var MuxTraffic = []Traffic{
	{Dir: "c2s", Type: "open", Data: "hello, server", Fields: map[string]uint64{"stream_id": 1}},
	{Dir: "s2c", Type: "stream data", Data: "hello, client", Fields: map[string]uint64{"stream_id": 1}},
	{Dir: "s2c", Type: "credit", Fields: map[string]uint64{"stream_id": 1, "increment": 13 + 64}},
	{Dir: "c2s", Type: "end", Fields: map[string]uint64{"stream_id": 1}},
	{Dir: "s2c", Type: "end", Fields: map[string]uint64{"stream_id": 1}},
	{Dir: "c2s", Type: "open", Fields: map[string]uint64{"stream_id": 2}},
	{Dir: "s2c", Type: "reset", Fields: map[string]uint64{"stream_id": 2, "code": 1}},
	{Dir: "c2s", Type: "ping", Fields: map[string]uint64{"opaque": 1}},
	{Dir: "s2c", Type: "pong", Fields: map[string]uint64{"opaque": 1}},
	{Dir: "s2c", Type: "go-away", Fields: map[string]uint64{"last_stream_id": 2, "code": 0}},
	{Dir: "s2c", Type: "close-write"},
	{Dir: "c2s", Type: "close-write"},
}

// MuxStories are further mode-3 sessions, by name (a session's Story),
// each showing rules of section 7 the first one does not.
var MuxStories = map[string][]Traffic{
	// The client sends data on stream 1 beyond its open, and gives the
	// server's data back as credit (7.3): each end's credit is the charge
	// of what its reader took, every frame's data and 64. Then the client
	// goes away (its last stream id is always 0), and with nothing open
	// each end sends its close-write (7.4).
	"client-data": {
		{Dir: "c2s", Type: "open", Data: "hello, server", Fields: map[string]uint64{"stream_id": 1}},
		{Dir: "c2s", Type: "stream data", Data: "and more", Fields: map[string]uint64{"stream_id": 1}},
		{Dir: "s2c", Type: "credit", Fields: map[string]uint64{"stream_id": 1, "increment": 13 + 64 + 8 + 64}},
		{Dir: "s2c", Type: "stream data", Data: "hello, client", Fields: map[string]uint64{"stream_id": 1}},
		{Dir: "c2s", Type: "credit", Fields: map[string]uint64{"stream_id": 1, "increment": 13 + 64}},
		{Dir: "c2s", Type: "end", Fields: map[string]uint64{"stream_id": 1}},
		{Dir: "s2c", Type: "end", Fields: map[string]uint64{"stream_id": 1}},
		{Dir: "c2s", Type: "go-away", Fields: map[string]uint64{"last_stream_id": 0, "code": 0}},
		{Dir: "c2s", Type: "close-write"},
		{Dir: "s2c", Type: "close-write"},
	},
	// The client opens stream 1, then sends credit for stream 2, which it
	// never opened: a protocol error (7.6). The server sends go-away with
	// code 1, protocol error, naming stream 1, the last opened before the
	// frame at fault (7.4), and closes the carrier without close-write.
	"protocol-error": {
		{Dir: "c2s", Type: "open", Data: "hello, server", Fields: map[string]uint64{"stream_id": 1}},
		{Dir: "c2s", Type: "credit", Fields: map[string]uint64{"stream_id": 2, "increment": 77}},
		{Dir: "s2c", Type: "go-away", Fields: map[string]uint64{"last_stream_id": 1, "code": 1}},
	},
	// The server goes away having received the open of stream 1 only,
	// while the client opens streams 2 and 3: the opens cross the go-away
	// on the wire, the server ignores them, and the client, on receiving
	// the go-away (last stream id 1), counts streams 2 and 3 as reset with
	// code refused, sending nothing for them (7.4). Stream 1 ends cleanly
	// both ways; then, with nothing open, each end sends its close-write.
	"go-away-refuses": {
		{Dir: "c2s", Type: "open", Data: "hello, server", Fields: map[string]uint64{"stream_id": 1}},
		{Dir: "s2c", Type: "go-away", Fields: map[string]uint64{"last_stream_id": 1, "code": 0}},
		{Dir: "c2s", Type: "open", Data: "second", Fields: map[string]uint64{"stream_id": 2}},
		{Dir: "c2s", Type: "open", Data: "third", Fields: map[string]uint64{"stream_id": 3}},
		{Dir: "c2s", Type: "end", Fields: map[string]uint64{"stream_id": 1}},
		{Dir: "s2c", Type: "end", Fields: map[string]uint64{"stream_id": 1}},
		{Dir: "c2s", Type: "close-write"},
		{Dir: "s2c", Type: "close-write"},
	},
}

// TrafficOf is what a session of mode, telling story (mode 3; "" for
// MuxTraffic), sends.
func TrafficOf(mode int, story string) []Traffic {
	if mode == 3 {
		if story != "" {
			return MuxStories[story]
		}
		return MuxTraffic
	}
	return StreamTraffic
}

// Seeded returns 32 bytes standing in for fresh randomness, named so a
// reader of the file can see nothing else went into them.
func Seeded(label string) []byte {
	h := sha256.Sum256([]byte("spipe/2 test vector " + label))
	return h[:]
}

// Inputs lays out one session's inputs.
func Inputs(s Suite, mode int, fs, withContext bool, padTo int) Session {
	return StoryInputs(s, mode, "", fs, withContext, padTo)
}

// StoryInputs lays out the inputs of a mode-3 session telling one of
// MuxStories (story "": MuxTraffic).
func StoryInputs(s Suite, mode int, story string, fs, withContext bool, padTo int) Session {
	name := fmt.Sprintf("%s fs=%v context=%v pad=%d", s.Name, fs, withContext, padTo)
	if mode != 1 {
		name += fmt.Sprintf(" mode=%d", mode)
	}
	if story != "" {
		name += " story=" + story
	}
	offer := func(first byte) []int {
		out := []int{int(first)}
		for _, d := range []int{1, 3} { // the default list (section 2.3)
			if d != int(first) {
				out = append(out, d)
			}
		}
		return out
	}
	se := Session{
		Name: name, KeyFile: VectorKeyFile, Mode: mode, Story: story,
		Client: EndInputs{Nonce: Seeded(name + " client nonce"), Suites: offer(s.ID), MaxPayload: 65536, PadTo: padTo},
		Server: EndInputs{Nonce: Seeded(name + " server nonce"), Suites: offer(s.ID), MaxPayload: 16384, PadTo: padTo},
	}
	if withContext {
		se.Context = VectorContext
	}
	if fs {
		se.Client.EphemeralPrivate = Seeded(name + " client ephemeral")
		se.Server.EphemeralPrivate = Seeded(name + " server ephemeral")
	}
	return se
}

// Derive computes every output of a session from its inputs, following
// the document step by step.
func Derive(s Suite, in Session) (Session, error) {
	out := in
	out.PSK, out.IPSK = ImportKey(in.KeyFile, in.Context) // section 1

	out.ClientHello = Hello(1, in.Client, in.Mode, 0, out.IPSK, nil) // section 2.1
	// The server chooses the first suite of its list that the client
	// offers (section 2.3), answers the client's mode, and sends a key
	// only if the client did and it does X25519 itself (section 2.4).
	out.ChosenSuite = 0
	for _, sv := range in.Server.Suites {
		if slices.Contains(in.Client.Suites, sv) {
			out.ChosenSuite = sv
			break
		}
	}
	if out.ChosenSuite != int(s.ID) {
		return out, fmt.Errorf("%s: the server would choose suite %d", in.Name, out.ChosenSuite)
	}
	server := in.Server
	if len(in.Client.EphemeralPrivate) == 0 {
		server.EphemeralPrivate = nil
	}
	out.ServerHello = Hello(2, server, in.Mode, out.ChosenSuite, out.IPSK, out.ClientHello)

	out.ForwardSecrecy = len(server.EphemeralPrivate) > 0 // section 3
	out.SharedSecret = nil
	if out.ForwardSecrecy {
		serverPub, err := curve25519.X25519(server.EphemeralPrivate, curve25519.Basepoint)
		if err != nil {
			return out, err
		}
		if out.SharedSecret, err = curve25519.X25519(in.Client.EphemeralPrivate, serverPub); err != nil {
			return out, err
		}
	}
	k := Schedule(out.IPSK, out.ClientHello, out.ServerHello, out.SharedSecret)
	out.TranscriptHash, out.PRK = k.TH, k.PRK
	out.KeyC2S, out.KeyS2C, out.KeyFinished = k.C2S, k.S2C, k.Finished
	out.ClientFinished = ClientFinished(k) // section 2.2

	out.Frames = nil // sections 4 and 7
	counters := map[string]uint64{}
	traffic := TrafficOf(in.Mode, in.Story)
	if traffic == nil {
		return out, fmt.Errorf("%s: no story %q", in.Name, in.Story)
	}
	for _, tr := range traffic {
		key, end := out.KeyC2S, in.Client
		if tr.Dir == "s2c" {
			key, end = out.KeyS2C, in.Server
		}
		f := Frame{Direction: tr.Dir, Counter: counters[tr.Dir], Type: tr.Type, Data: []byte(tr.Data), Fields: tr.Fields}
		counters[tr.Dir]++
		f.Inner = Inner(tr.Type, Body(tr.Type, f.Data, tr.Fields), end.PadTo)
		f.Frame = SealFrame(s, NewConstruction(s, key), f.Counter, f.Inner)
		f.Nonce, f.AD = NonceAndAD(s, f.Counter, f.Frame[:3])
		out.Frames = append(out.Frames, f)
	}
	return out, nil
}
