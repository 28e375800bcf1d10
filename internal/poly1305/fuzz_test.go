package poly1305

import (
	"testing"
)

// FuzzKernels checks every kernel against the generic reference on
// arbitrary keys and messages, written in pieces whose sizes the fuzzer
// also picks (split cycles through its bytes).
func FuzzKernels(f *testing.F) {
	f.Add(make([]byte, KeySize), []byte("hello"), []byte{3})
	f.Add(make([]byte, KeySize), make([]byte, 1000), []byte{255, 16, 0})
	ones := make([]byte, 600)
	for i := range ones {
		ones[i] = 0xff
	}
	f.Add(ones[:KeySize], ones, []byte{})
	f.Fuzz(func(t *testing.T, keyBytes, msg, split []byte) {
		if len(keyBytes) < KeySize {
			return
		}
		key := (*[KeySize]byte)(keyBytes)
		want := referenceSum(key, msg)
		for _, name := range Kernels() {
			restore, err := UseKernel(name)
			if err != nil {
				t.Fatal(err)
			}
			m := New(key)
			rest := msg
			for i := 0; len(rest) > 0; i++ {
				n := len(rest)
				if len(split) > 0 {
					n = min(n, int(split[i%len(split)])*7)
				}
				m.Write(rest[:n])
				if n == 0 { // an empty write, then progress anyway
					n = min(len(rest), blockSize+1)
					m.Write(rest[:n])
				}
				rest = rest[n:]
			}
			got := m.Sum(nil)
			restore()
			if string(got) != string(want[:]) {
				t.Fatalf("%s: tag %x, reference %x (%d bytes)", name, got, want, len(msg))
			}
		}
	})
}

// FuzzSumAEAD checks SumAEAD on every kernel against the generic reference
// over the RFC 8439 MAC input built by hand, for arbitrary keys,
// additional data and ciphertexts.
func FuzzSumAEAD(f *testing.F) {
	f.Add(make([]byte, KeySize), []byte("ad"), make([]byte, 1000))
	f.Add(make([]byte, KeySize), []byte{}, make([]byte, 1024))
	f.Fuzz(func(t *testing.T, keyBytes, ad, ct []byte) {
		if len(keyBytes) < KeySize {
			return
		}
		key := (*[KeySize]byte)(keyBytes)
		want := referenceSum(key, aeadMACInput(ad, ct))
		for _, name := range Kernels() {
			restore, err := UseKernel(name)
			if err != nil {
				t.Fatal(err)
			}
			var got [TagSize]byte
			SumAEAD(&got, key, ad, ct)
			restore()
			if got != want {
				t.Fatalf("%s: tag %x, reference %x (ad %d, ct %d bytes)", name, got, want, len(ad), len(ct))
			}
		}
	})
}
