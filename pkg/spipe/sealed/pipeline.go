package sealed

import (
	"io"
	"runtime"
	"sync"

	"github.com/spipe-dev/spipe/pkg/aead"
)

// job is one chunk on its way through a pipeline: its buffer (a whole
// sealed chunk, ChunkSize+TagSize bytes), how many bytes of it are in use,
// its place in the file and, once processed, its error.
type job struct {
	buf   []byte
	n     int // the Writer: plaintext bytes; the Reader: sealed bytes
	index uint64
	final bool
	err   error         // set by process, or before submit for a failure known without one
	done  chan struct{} // one token once processed (buffered, reused)
	// src, when set, is where process first reads the chunk's bytes, at
	// offset at: input read on the workers, in parallel, rather than by
	// the goroutine driving the pipeline.
	src   io.ReaderAt
	at    int64
	nonce [aead.NonceSizeX]byte
}

// pipeline seals or opens chunks on up to `workers` goroutines and hands
// them back in file order. Its memory is fixed when it is made: `depth`
// chunk buffers, reused, so the hot path allocates nothing. The free list
// and the queue belong to the one goroutine that drives the pipeline (a
// Writer's or Reader's caller); workers see only the jobs sent to them.
//
// With one worker there are no goroutines: submit processes the chunk
// itself.
type pipeline struct {
	process func(*job)
	work    chan *job // nil with one worker
	stopped sync.Once
	free    []*job
	queue   []*job // a ring of the submitted jobs, in file order
	head    int    // the oldest submitted job's place in queue
	count   int    // how many are submitted and not yet taken
}

// depthFor is how many chunk buffers a pipeline of `workers` holds: two
// per worker (one being processed, one read or written meanwhile) and
// one more for the chunk whose finality is not known yet.
func depthFor(workers int) int { return 2*workers + 1 }

func newPipeline(workers, bufSize int, process func(*job)) *pipeline {
	depth := depthFor(workers)
	p := &pipeline{process: process, free: make([]*job, 0, depth), queue: make([]*job, depth)}
	for range depth {
		p.free = append(p.free, &job{buf: make([]byte, bufSize), done: make(chan struct{}, 1)})
	}
	if workers > 1 {
		p.work = make(chan *job, depth)
		for range workers {
			go routineWorker(p.work, process)
		}
	}
	return p
}

// routineWorker processes jobs until the pipeline stops. It holds the
// channel and the function, not the pipeline, so that an abandoned
// Reader or Writer can be collected and its cleanup can stop it.
func routineWorker(work <-chan *job, process func(*job)) {
	for j := range work {
		if j.err == nil {
			process(j)
		}
		j.done <- struct{}{}
	}
}

// get returns a free job, reset, or nil if every job is in use.
func (p *pipeline) get() *job {
	if len(p.free) == 0 {
		return nil
	}
	j := p.free[len(p.free)-1]
	p.free = p.free[:len(p.free)-1]
	j.n, j.index, j.final, j.err, j.src, j.at = 0, 0, false, nil, nil, 0
	return j
}

// put returns a job to the free list.
func (p *pipeline) put(j *job) { p.free = append(p.free, j) }

// submit queues j, processed unless it carries an error already.
func (p *pipeline) submit(j *job) {
	p.queue[(p.head+p.count)%len(p.queue)] = j
	p.count++
	if p.work == nil {
		if j.err == nil {
			p.process(j)
		}
		return
	}
	p.work <- j
}

// waiting is the number of submitted jobs not yet taken by oldest.
func (p *pipeline) waiting() int { return p.count }

// oldest waits for the first submitted job not yet taken and returns it,
// or nil if there is none.
func (p *pipeline) oldest() *job {
	if p.count == 0 {
		return nil
	}
	j := p.queue[p.head]
	p.queue[p.head] = nil
	p.head = (p.head + 1) % len(p.queue)
	p.count--
	if p.work != nil {
		<-j.done
	}
	return j
}

// stop ends the workers; jobs they hold finish on their own. It may be
// called more than once.
func (p *pipeline) stop() {
	p.stopped.Do(func() {
		if p.work != nil {
			close(p.work)
		}
	})
}

// stopWhenUnreachable stops p's workers if owner, the Reader or Writer
// driving p, is dropped without being read to the end or closed.
func stopWhenUnreachable[T any](owner *T, p *pipeline) {
	if p.work != nil {
		runtime.AddCleanup(owner, func(p *pipeline) { p.stop() }, p)
	}
}

// workerCount is the number of workers Options asks for: the CPUs Go
// uses unless set.
func workerCount(n int) int {
	if n <= 0 {
		return runtime.GOMAXPROCS(0)
	}
	return n
}

// readJob reads p from j.src at j.at, the whole of it: io.ReaderAt may
// report io.EOF with a full read at the end of its input.
func readJob(j *job, p []byte) error { return readFullAt(j.src, p, j.at) }

// readFullAt reads all of p from src at off.
func readFullAt(src io.ReaderAt, p []byte, off int64) error {
	n, err := src.ReadAt(p, off)
	if n == len(p) {
		return nil
	}
	if err == nil || err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return err
}
