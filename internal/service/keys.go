package service

import (
	"slices"

	"github.com/spipe-dev/spipe/internal/keyring"
	"github.com/spipe-dev/spipe/pkg/spipe"
)

// keySet is the protocol configuration in use and the fingerprints of its
// keys, swapped as a whole when the key files are reloaded: a handshake
// names the key it used from the set it ran with.
type keySet struct {
	config       *spipe.Config
	fingerprints []string // of config.Keys, in order
}

func (s *Service) newKeySet(keys []*spipe.Key) (*keySet, error) {
	cfg := &spipe.Config{
		Keys:             keys,
		Context:          s.opts.Context,
		Suites:           s.opts.Suites,
		ForwardSecrecy:   s.opts.forwardSecrecy(),
		PadTo:            s.opts.PadTo,
		HandshakeTimeout: s.opts.HandshakeTimeout,
		// The largest frames the protocol allows: a bulk stream is sealed
		// in frames of up to 1 MiB (pkg/spipe takes buffers that large only
		// while a stream keeps them full), which cost about a quarter less
		// CPU per byte than 64 KiB ones (docs/PIPE.md). Interactive writes
		// still go out at once, each in a frame of its own size.
		MaxPayload: spipe.MaxPayloadLimit,
		// A listener serves plain and multiplexed clients alike; a
		// connect asks for the mode it runs.
		Multiplex: s.opts.Mode == Listen || s.opts.Mux,
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	ks := &keySet{config: cfg}
	for _, k := range keys {
		ks.fingerprints = append(ks.fingerprints, k.Fingerprint())
	}
	return ks, nil
}

// loadKeys reads the key files for Start. Start logs them once nothing
// else can fail: a failed start is one line.
func (s *Service) loadKeys() error {
	r, keys, err := keyring.Load(s.opts.KeyFiles, s.opts.Stdin, s.log)
	if err != nil {
		return err
	}
	ks, err := s.newKeySet(keys)
	if err != nil {
		return err
	}
	s.keyring = r
	s.keys.Store(ks)
	return nil
}

// Reload re-reads the key files; connections accepted afterwards use the
// new keys, open ones keep theirs. On error (naming the file that failed)
// the old keys stay in use.
func (s *Service) Reload() error {
	keys, err := s.keyring.Reload()
	if err != nil {
		return err
	}
	ks, err := s.newKeySet(keys)
	if err != nil {
		return err
	}
	s.keys.Store(ks)
	s.logKeys(ks)
	// A multiplexed carrier whose client proved a key no longer loaded
	// forwards no new stream (its open ones are kept, as open plain
	// connections are).
	s.fwd.RetireCarriers(func(key string) bool { return slices.Contains(ks.fingerprints, key) })
	return nil
}

// logKeys names each key in use by file and fingerprint, so the two ends
// can be compared. For a stdio connection it is a debug line: stderr is
// the terminal of the user running ssh.
func (s *Service) logKeys(ks *keySet) {
	log := s.log.Info
	if s.opts.Source == nil {
		log = s.log.Debug
	}
	for i, f := range s.keyring.Files() {
		if f == keyring.Stdin {
			f = "(standard input)"
		}
		log("key loaded", "file", f, "fingerprint", ks.fingerprints[i])
	}
}
