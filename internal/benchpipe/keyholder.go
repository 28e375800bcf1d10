package main

import (
	"encoding/binary"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spipe-dev/spipe/internal/testutil/spec"
)

// The stream layer's numbers the key holder counts with
// (docs/PROTOCOL.md 7.3).
const (
	streamWindow = 256 << 10
	frameCharge  = 64
)

// smallFrames plays issue 22's hostile key holder against a listener
// whose target never reads (see silent), and measures what the listener
// (process pid) holds for it: it opens streams streams and sends each
// nothing but 1-byte frames, packed by the thousand into each write, as
// long as the listener's credit lets it (up to perStream frames a stream).
// It prints the growth of the listener's peak resident memory, and the
// bound docs/PROTOCOL.md 7.8 states for it: streams x window x 1.5 +
// 32 MiB.
func smallFrames(addr, keyFile string, pid, streams, perStream int) error {
	key, err := os.ReadFile(keyFile)
	if err != nil {
		return err
	}
	before, err := procStatus(pid, "VmRSS")
	if err != nil {
		return err
	}
	_ = os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0) // peak from now on
	raw, err := net.Dial("tcp", addr)
	if err != nil {
		return err
	}
	defer raw.Close()
	p, err := spec.Dial(raw, key, "", 3, 0)
	if err != nil {
		return err
	}
	var mu sync.Mutex
	granted := map[uint32]int64{}
	lost := make(chan error, 1)
	go func() {
		for {
			typ, body, err := p.Read()
			if err != nil {
				lost <- err
				return
			}
			if typ == spec.Types["credit"] {
				mu.Lock()
				granted[binary.BigEndian.Uint32(body)] += int64(binary.BigEndian.Uint32(body[4:]))
				mu.Unlock()
			}
		}
	}()
	spent := make([]int64, streams+1)
	sent := make([]int, streams+1)
	var wire []byte
	flush := func() error {
		if len(wire) == 0 {
			return nil
		}
		_, err := raw.Write(wire)
		wire = wire[:0]
		return err
	}
	frames := 0
	idle := time.Now()
	for time.Since(idle) < 300*time.Millisecond {
		progress := false
		for id := uint32(1); id <= uint32(streams); id++ {
			mu.Lock()
			room := (streamWindow + granted[id] - spent[id]) / (1 + frameCharge)
			mu.Unlock()
			for ; room > 0 && sent[id] < perStream; room-- {
				typ := "stream data"
				if sent[id] == 0 {
					typ = "open"
				}
				wire = append(wire, p.Frame(typ, []byte{'x'}, map[string]uint64{"stream_id": uint64(id)})...)
				spent[id] += 1 + frameCharge
				sent[id]++
				frames++
				progress = true
				if len(wire) >= 64<<10 {
					if err := flush(); err != nil {
						return err
					}
				}
			}
		}
		if err := flush(); err != nil {
			return err
		}
		select {
		case err := <-lost:
			return fmt.Errorf("the listener ended the carrier: %w", err)
		default:
		}
		if progress {
			idle = time.Now()
		} else {
			time.Sleep(20 * time.Millisecond)
		}
	}
	peak, err := procStatus(pid, "VmHWM")
	if err != nil {
		return err
	}
	bound := int64(streams)*streamWindow*3/2 + 32<<20
	fmt.Printf("streams=%d frames=%d rss_before_kib=%d peak_kib=%d growth_kib=%d bound_kib=%d\n",
		streams, frames, before, peak, peak-before, bound>>10)
	return nil
}

// procStatus reads a "kB" field of a process's /proc status, in KiB.
func procStatus(pid int, field string) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			return strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		}
	}
	return 0, fmt.Errorf("no %s for process %d", field, pid)
}

// silent is a target that accepts connections and never reads them:
// what a stream forwards to it stays in the listener or the kernel.
func silent(addr string) error {
	return serve(addr, func(*net.TCPConn) { select {} })
}
