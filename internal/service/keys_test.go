package service_test

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/spipe-dev/spipe/internal/service"
	"github.com/spipe-dev/spipe/internal/testutil/pipetest"
)

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(to, b, 0o600))
}

// TestKeyRotationOnReload: a reload (SIGHUP) makes new connections use the
// new key file and keeps the open ones.
func TestKeyRotationOnReload(t *testing.T) {
	oldKey, newKey := pipetest.KeyFile(t), pipetest.KeyFile(t)
	serverKey := filepath.Join(t.TempDir(), "server.key")
	copyFile(t, oldKey, serverKey)
	tg := pipetest.EchoTarget(t)
	listen := pipetest.Start(t, service.Listen, "127.0.0.1:0", tg.Addr, serverKey, nil)
	oldConnect := pipetest.Start(t, service.Connect, "127.0.0.1:0", listen.Addr, oldKey, nil)
	newConnect := pipetest.Start(t, service.Connect, "127.0.0.1:0", listen.Addr, newKey, nil)

	// A connection under the old key, open across the reload.
	open := pipetest.Dial(t, oldConnect.Addr)
	pipetest.EchoOnce(t, open, "before")
	require.Error(t, pipetest.TryEcho(newConnect.Addr, "new"), "new key admitted before the reload")

	copyFile(t, newKey, serverKey)
	listen.Reload()
	listen.Log.Wait(t, `msg="keys reloaded" keys=1`, nil)
	assert.NoError(t, pipetest.TryEcho(newConnect.Addr, "new"), "new key refused after the reload")
	require.Error(t, pipetest.TryEcho(oldConnect.Addr, "old"), "old key still admitted after the reload")
	pipetest.EchoOnce(t, open, "after") // not dropped
}

func TestSeveralKeys(t *testing.T) {
	k1, k2, k3 := pipetest.KeyFile(t), pipetest.KeyFile(t), pipetest.KeyFile(t)
	tg := pipetest.EchoTarget(t)
	listen := pipetest.Start(t, service.Listen, "127.0.0.1:0", tg.Addr, k1, func(o *service.Options) {
		o.KeyFiles = []string{k1, k2}
	})
	for k, ok := range map[string]bool{k1: true, k2: true, k3: false} {
		connect := pipetest.Start(t, service.Connect, "127.0.0.1:0", listen.Addr, k, nil)
		err := pipetest.TryEcho(connect.Addr, "hi")
		assert.Equal(t, ok, err == nil, "key %s: %v", filepath.Base(k), err)
	}
}

func TestKeyFromStdin(t *testing.T) {
	key := pipetest.KeyFile(t)
	material, err := os.ReadFile(key)
	require.NoError(t, err)
	tg := pipetest.EchoTarget(t)
	listen := pipetest.Start(t, service.Listen, "127.0.0.1:0", tg.Addr, "-", func(o *service.Options) {
		o.Stdin = io.NopCloser(bytes.NewReader(material))
	})
	connect := pipetest.Start(t, service.Connect, "127.0.0.1:0", listen.Addr, key, nil)
	assert.NoError(t, pipetest.TryEcho(connect.Addr, "stdin key"))
}

func TestKeyFilePermissionWarning(t *testing.T) {
	key := pipetest.KeyFile(t)
	require.NoError(t, os.Chmod(key, 0o644))
	tg := pipetest.EchoTarget(t)
	listen := pipetest.Start(t, service.Listen, "127.0.0.1:0", tg.Addr, key, nil)
	listen.Log.Wait(t, `level=WARN msg="key file is accessible by others; chmod 600 it" file=\S+ mode=0644`, nil)
}

// TestShortKeyFile: a key file shorter than 32 bytes, which spiped takes
// (a 29-byte pass.key), works unchanged at both ends, with the weak-key
// warning at start-up.
func TestShortKeyFile(t *testing.T) {
	key := filepath.Join(t.TempDir(), "pass.key")
	require.NoError(t, os.WriteFile(key, pipetest.RandomBytes(29), 0o600))
	tg := pipetest.EchoTarget(t)
	listen, connect := pipetest.Pair(t, tg.Addr, key, nil)
	msg := []byte("through a 29-byte key")
	assert.Equal(t, msg, pipetest.RoundTrip(t, pipetest.Dial(t, connect.Addr), msg))
	for _, s := range []*pipetest.Service{listen, connect} {
		assert.Equal(t, 1, s.Log.Count("level=WARN", "does not look like a key", "fewer than 32 bytes"), s.Log.String())
	}
}
