package aead

// x/crypto deprecated its poly1305 package to steer users to complete
// constructions; this package is such a construction, and the issue tracker
// schedules a Poly1305 of our own to replace this import.
import (
	//lint:ignore SA1019 Poly1305 is the building block of the AEADs here.
	"golang.org/x/crypto/poly1305"
)

// polyMAC is the running Poly1305 authenticator of one message.
type polyMAC = poly1305.MAC

// newMAC returns Poly1305 keyed with a one-time key. It is inlined, so the
// MAC lives on the caller's stack.
func newMAC(key *[32]byte) *polyMAC { return poly1305.New(key) }
