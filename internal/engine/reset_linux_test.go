package engine

import (
	"io"
	"net"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/spipe-dev/spipe/internal/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestResetAfterEOF: when a peer resets a connection and a write takes the
// ECONNRESET, a read sees a plain EOF; resetAfterEOF still tells that from
// a peer's clean close.
func TestResetAfterEOF(t *testing.T) {
	for _, reset := range []bool{false, true} {
		ours, peer := testutil.TCPPair(t)
		if reset {
			require.NoError(t, peer.(*net.TCPConn).SetLinger(0))
		}
		require.NoError(t, peer.Close())
		if reset {
			// Let the RST arrive, then have a write take its error.
			require.Eventually(t, func() bool {
				_, err := ours.Write([]byte("x"))
				return err != nil
			}, 5*time.Second, 5*time.Millisecond)
		}
		require.NoError(t, ours.SetReadDeadline(time.Now().Add(5*time.Second)))
		_, err := ours.Read(make([]byte, 1))
		require.ErrorIs(t, err, io.EOF, "reset %v: the read sees a plain end", reset)
		assert.Equal(t, reset, resetAfterEOF(ours), "reset %v", reset)
		got := sourceEnd(ours.(Conn), halves{src: new(atomic.Bool)})
		if reset {
			assert.ErrorIs(t, got, syscall.ECONNRESET)
		} else {
			assert.NoError(t, got)
		}
	}
}

// TestSourceEndAfterOwnFIN: a socket that sent its FIN before the peer's
// arrived is in CLOSE as well (it handed over to TIME_WAIT), so once the
// pipe has shut a source's write half, its EOF is a clean end.
func TestSourceEndAfterOwnFIN(t *testing.T) {
	ours, peer := testutil.TCPPair(t)
	require.NoError(t, ours.(*net.TCPConn).CloseWrite())
	_, err := io.Copy(io.Discard, peer) // the peer reads our FIN, then closes
	require.NoError(t, err)
	require.NoError(t, peer.Close())
	require.NoError(t, ours.SetReadDeadline(time.Now().Add(5*time.Second)))
	_, err = ours.Read(make([]byte, 1))
	require.ErrorIs(t, err, io.EOF)
	assert.True(t, resetAfterEOF(ours), "the socket's state alone cannot tell this end from a reset")
	var shut atomic.Bool
	shut.Store(true)
	assert.NoError(t, sourceEnd(ours.(Conn), halves{src: &shut}))
}

// TestResetAfterEOFClosedSocket: a socket closed between its EOF and the
// check was closed by the pipe's abort (the other direction's write took
// the reset), so it counts as reset, never as a clean end.
func TestResetAfterEOFClosedSocket(t *testing.T) {
	ours, _ := testutil.TCPPair(t)
	require.NoError(t, ours.Close())
	assert.True(t, resetAfterEOF(ours))
	assert.ErrorIs(t, sourceEnd(ours.(Conn), halves{src: new(atomic.Bool)}), syscall.ECONNRESET)
}
