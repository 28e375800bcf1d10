package spipe

import "github.com/spipe-dev/spipe/internal/keyaccess"

// The module's other key schedules (pkg/spipe/sealed) derive their keys
// from a Key's PSK; they reach it through internal/keyaccess, so the
// public API still never shows it.
func init() { keyaccess.Register(func(k *Key) [32]byte { return k.psk }) }
