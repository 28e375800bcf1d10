package spipe

import (
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
)

// Labels of the key schedule (docs/PROTOCOL.md, "Key schedule").
const (
	labelImport         = "spipe/2 key import"
	labelClientToServer = "spipe/2 client to server"
	labelServerToClient = "spipe/2 server to client"
	labelFinished       = "spipe/2 client finished"
)

// importKey derives the key a tunnel's handshakes use from the PSK and the
// operator's context string, as RFC 9258 imports an external PSK for one
// use: IPSK = HKDF-Expand(PSK, "spipe/2 key import" || len(context) ||
// context, 32). Every MAC and the key schedule use IPSK, so a handshake
// between ends with different contexts fails exactly as with different
// keys, and a client cannot be steered to another tunnel that shares the
// key (or reflected into its own host's listener) unless the contexts
// match. The caller bounds len(context) to 255.
func importKey(psk *[32]byte, context string) [32]byte {
	info := make([]byte, 0, len(labelImport)+1+len(context))
	info = append(info, labelImport...)
	info = append(info, byte(len(context)))
	info = append(info, context...)
	out, err := hkdf.Expand(sha256.New, psk[:], string(info), 32)
	if err != nil {
		panic("spipe: HKDF-Expand of 32 bytes failed: " + err.Error()) // cannot happen for 32 bytes
	}
	var ipsk [32]byte
	copy(ipsk[:], out)
	clear(out)
	return ipsk
}

// helloMAC computes HMAC-SHA256 under ipsk of the transcript so far
// followed by the new message's body, into out.
func helloMAC(out []byte, ipsk *[32]byte, transcript, body []byte) {
	m := hmac.New(sha256.New, ipsk[:])
	m.Write(transcript)
	m.Write(body)
	m.Sum(out[:0])
}

// matchClientKey finds which imported key's MAC equals mac over body.
// Every key is tried and the index is selected without branches, so the
// time taken does not depend on which key (if any) matched. ok is false
// if none did.
func matchClientKey(ipsks [][32]byte, body, mac []byte) (ipsk [32]byte, index int, ok bool) {
	var sum [macSize]byte
	found := 0
	for i := range ipsks {
		helloMAC(sum[:], &ipsks[i], nil, body)
		eq := subtle.ConstantTimeCompare(sum[:], mac)
		take := eq &^ found // first match only
		index = subtle.ConstantTimeSelect(take, i, index)
		subtle.ConstantTimeCopy(take, ipsk[:], ipsks[i][:])
		found |= eq
	}
	return ipsk, index, found == 1
}

// sessionKeys are the outputs of the key schedule.
type sessionKeys struct {
	clientToServer, serverToClient, finished []byte
}

// deriveKeys runs the key schedule: PRK = HKDF-Extract(salt = transcript
// hash, ikm = IPSK || X25519 secret), then one HKDF-Expand per output.
func deriveKeys(ipsk *[32]byte, shared []byte, transcriptHash []byte) (*sessionKeys, error) {
	ikm := make([]byte, 0, 64)
	ikm = append(ikm, ipsk[:]...)
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
