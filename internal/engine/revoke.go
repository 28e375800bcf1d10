package engine

import (
	"context"
	"log/slog"
	"net"
)

// The listening side keeps the carriers it serves, with the key each
// client proved, so that a key that is no longer loaded (SIGHUP after a
// key file changed) forwards no new stream: RetireCarriers sends those
// carriers go-away, while their open streams carry on, as open plain
// connections do.

// liveCarrier is a carrier the listening side serves.
type liveCarrier struct {
	c    Carrier
	key  string // fingerprint of the key its client proved
	peer net.Addr
}

// carrierServed registers c while it is served, and sends it go-away at
// once if its key was retired while its handshake ran.
func (f *Forwarder) carrierServed(c Carrier, s *Session, peer net.Addr) *liveCarrier {
	lc := &liveCarrier{c: c, key: s.Key, peer: peer}
	f.liveMu.Lock()
	if f.liveCarriers == nil {
		f.liveCarriers = make(map[*liveCarrier]struct{})
	}
	f.liveCarriers[lc] = struct{}{}
	keep := f.keepKey
	f.liveMu.Unlock()
	if keep != nil && !keep(lc.key) {
		f.retire(lc)
	}
	return lc
}

func (f *Forwarder) carrierDone(lc *liveCarrier) {
	f.liveMu.Lock()
	delete(f.liveCarriers, lc)
	f.liveMu.Unlock()
}

// RetireCarriers sends go-away on every multiplexed carrier served whose
// client's key (by fingerprint) keep refuses, and on those that arrive
// with such a key later: they carry no new stream, and their open ones
// carry on. It returns how many it retired now. The spipe tool calls it
// after reloading its keys, with the keys now loaded.
func (f *Forwarder) RetireCarriers(keep func(key string) bool) int {
	f.liveMu.Lock()
	f.keepKey = keep
	var retire []*liveCarrier
	for lc := range f.liveCarriers {
		if !keep(lc.key) {
			retire = append(retire, lc)
		}
	}
	f.liveMu.Unlock()
	for _, lc := range retire {
		f.retire(lc)
	}
	return len(retire)
}

func (f *Forwarder) retire(lc *liveCarrier) {
	_ = lc.c.GoAway()
	f.log().LogAttrs(context.Background(), slog.LevelInfo, "carrier's key is no longer loaded: it takes no new streams",
		slog.String("peer", addrString(lc.peer)), slog.String("key", lc.key))
}
