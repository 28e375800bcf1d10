package salsacore

import "math/rand/v2"

// testState is a state with a random key and nonce (Init's layout) from a
// fixed seed, so failures reproduce.
func testState(seed uint64) State {
	r := rand.New(rand.NewPCG(seed, 0x5a15a))
	var s State
	key := make([]byte, 32)
	nonce := make([]byte, 8)
	for i := range key {
		key[i] = byte(r.Uint32())
	}
	for i := range nonce {
		nonce[i] = byte(r.Uint32())
	}
	Init(&s, key, nonce)
	s[9] = r.Uint32()
	return s
}

func randomBytes(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 0xb10c))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}
