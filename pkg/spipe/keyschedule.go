package spipe

import (
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
)

// HKDF labels of the key schedule (docs/PROTOCOL.md, "Key schedule").
const (
	labelClientToServer = "spipe/1 client to server"
	labelServerToClient = "spipe/1 server to client"
	labelFinished       = "spipe/1 client finished"
)

// helloMAC computes HMAC-SHA256 under psk of the transcript so far followed
// by the new message's body, into out.
func helloMAC(out []byte, psk *[32]byte, transcript, body []byte) {
	m := hmac.New(sha256.New, psk[:])
	m.Write(transcript)
	m.Write(body)
	m.Sum(out[:0])
}

// matchClientKey finds which key's MAC equals mac over body. Every key is
// tried and the index is selected without branches, so the time taken does
// not depend on which key (if any) matched. ok is false if none did.
func matchClientKey(keys []*Key, body, mac []byte) (psk [32]byte, index int, ok bool) {
	var sum [macSize]byte
	found := 0
	for i, k := range keys {
		helloMAC(sum[:], &k.psk, nil, body)
		eq := subtle.ConstantTimeCompare(sum[:], mac)
		take := eq &^ found // first match only
		index = subtle.ConstantTimeSelect(take, i, index)
		subtle.ConstantTimeCopy(take, psk[:], k.psk[:])
		found |= eq
	}
	return psk, index, found == 1
}

// sessionKeys are the outputs of the key schedule.
type sessionKeys struct {
	clientToServer, serverToClient, finished []byte
}

// deriveKeys runs the key schedule: PRK = HKDF-Extract(salt = transcript
// hash, ikm = PSK || X25519 secret), then one HKDF-Expand per output.
func deriveKeys(psk *[32]byte, shared []byte, transcriptHash []byte) (*sessionKeys, error) {
	ikm := make([]byte, 0, 64)
	ikm = append(ikm, psk[:]...)
	ikm = append(ikm, shared...)
	defer clear(ikm)
	prk, err := hkdf.Extract(sha256.New, ikm, transcriptHash)
	if err != nil {
		return nil, err
	}
	defer clear(prk)
	var k sessionKeys
	for _, out := range []struct {
		dst   *[]byte
		label string
	}{
		{&k.clientToServer, labelClientToServer},
		{&k.serverToClient, labelServerToClient},
		{&k.finished, labelFinished},
	} {
		if *out.dst, err = hkdf.Expand(sha256.New, prk, out.label, 32); err != nil {
			return nil, err
		}
	}
	return &k, nil
}

func (k *sessionKeys) wipe() {
	clear(k.clientToServer)
	clear(k.serverToClient)
	clear(k.finished)
}

// finishedMAC is the client's key confirmation: HMAC-SHA256 under the
// finished key of the transcript hash.
func finishedMAC(out []byte, finishedKey, transcriptHash []byte) {
	m := hmac.New(sha256.New, finishedKey)
	m.Write(transcriptHash)
	m.Sum(out[:0])
}
