package spipe

import (
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSmoke(t *testing.T) {
	k := newTestKey(t)
	cfg := &Config{Keys: []*Key{k}}
	cli, srv := connected(t, "tcp", cfg, cfg)
	msg := randomBytes(t, 200000)
	go func() { cli.Write(msg); cli.CloseWrite() }()
	got, err := io.ReadAll(srv)
	require.NoError(t, err)
	assert.Equal(t, msg, got)
}
