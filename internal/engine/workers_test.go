package engine

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// settle waits until cond holds, for at most 5 s, and reports whether it
// did.
func settle(cond func() bool) bool {
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(time.Millisecond)
	}
	return true
}

func TestWorkersReuseTheirGoroutines(t *testing.T) {
	w := newWorkers(time.Minute, 8)
	ran := 0
	for range 100 {
		done := make(chan struct{})
		w.run(func() { ran++; close(done) })
		<-done
		require.True(t, settle(func() bool { return w.idle.Load() == w.live.Load() }), "workers not idle")
	}
	assert.Equal(t, 100, ran)
	// Run after run finds a worker waiting; only one that has finished
	// but not yet started to wait makes run start another.
	assert.LessOrEqual(t, w.live.Load(), int32(3), "a hundred runs one after another started %d workers", w.live.Load())
	w.stop()
	assert.Equal(t, int32(0), w.live.Load(), "stop ends the idle workers")
}

func TestWorkersRunConcurrently(t *testing.T) {
	w := newWorkers(time.Minute, 4)
	defer w.stop()
	// Ten functions that each wait for all ten to start: they finish only
	// if every one has a goroutine of its own.
	var started, finished sync.WaitGroup
	started.Add(10)
	finished.Add(10)
	for range 10 {
		w.run(func() { started.Done(); started.Wait(); finished.Done() })
	}
	finished.Wait()
}

func TestWorkersKeepAtMostMaxIdle(t *testing.T) {
	w := newWorkers(time.Minute, 4)
	release := make(chan struct{})
	var running sync.WaitGroup
	running.Add(10)
	for range 10 {
		w.run(func() { running.Done(); <-release })
	}
	running.Wait()
	assert.Equal(t, int32(10), w.live.Load())
	close(release)
	// Six of the ten exit as they finish; four stay for more work.
	require.True(t, settle(func() bool { return w.live.Load() == 4 }), "%d workers left, want 4", w.live.Load())
	assert.Equal(t, int32(4), w.idle.Load())
	w.stop()
	assert.Equal(t, int32(0), w.live.Load())
}

func TestIdleWorkersExit(t *testing.T) {
	w := newWorkers(20*time.Millisecond, 4)
	defer w.stop()
	done := make(chan struct{})
	w.run(func() { close(done) })
	<-done
	assert.True(t, settle(func() bool { return w.live.Load() == 0 }), "idle worker did not exit")
	assert.Equal(t, int32(0), w.idle.Load())
}
