// Package keyaccess hands the module's own packages the secret bytes of a
// [github.com/spipe-dev/spipe/pkg/spipe.Key], which its public API never
// shows (String, GoString and Fingerprint print only a fingerprint, and
// the struct has no exported field for fmt or a logger to reach).
//
// pkg/spipe registers the accessor in its init; a package that imports
// pkg/spipe (as pkg/spipe/sealed does) can therefore always call PSK.
// Being internal, it is out of reach of the module's users: the key's
// bytes leave pkg/spipe only into this module's key schedules.
package keyaccess

// psk is the registered accessor, a func(K) [32]byte for pkg/spipe's key
// type K. It is generic through any so that this package need not import
// pkg/spipe (which imports it).
var psk any

// Register records how to read the pre-shared key of a K. pkg/spipe calls
// it once, from init.
func Register[K any](f func(K) [32]byte) { psk = f }

// PSK returns the 32-byte pre-shared key of k. It panics if no accessor
// for K was registered, which would be a bug in this module.
func PSK[K any](k K) [32]byte {
	f, ok := psk.(func(K) [32]byte)
	if !ok {
		panic("keyaccess: no accessor registered for this key type")
	}
	return f(k)
}
