//go:build !amd64 || !gc || purego

package aeadcore

// Without the kernels every message is left to the caller.

func sealChaCha(s *[16]uint32, rounds int, dst, src, ad []byte, tag *[16]byte) bool { return false }

func openChaCha(s *[16]uint32, rounds int, dst, src, ad []byte, tag *[16]byte) (ok, handled bool) {
	return false, false
}

func sealSecretbox(s *[16]uint32, rounds int, dst, src []byte, tag *[16]byte) bool { return false }

func openSecretbox(s *[16]uint32, rounds int, dst, src []byte, tag *[16]byte) (ok, handled bool) {
	return false, false
}
