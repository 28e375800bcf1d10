package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/spipe-dev/spipe/internal/delayproxy"
)

// delay runs a delay proxy (internal/delayproxy) from listen to target
// until SIGTERM/SIGINT: each byte arrives d after it was sent, and a new
// connection's first bytes three delays after its connect, as over a
// link of round trip 2d.
func delay(listen, target string, d time.Duration) error {
	p, err := delayproxy.Start(listen, target, d)
	if err != nil {
		return err
	}
	fmt.Println(p.Addr())
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	<-ctx.Done()
	return p.Close()
}

// ttfb opens n connections one after another and times each from the
// start of its connect to its first echoed byte (one byte sent at once).
// It prints the median of connections 2..n in milliseconds (the first may
// pay for what a system sets up once), and the first alone.
func ttfb(addr string, n int) error {
	if n < 2 {
		return fmt.Errorf("ttfb needs -n 2 or more")
	}
	times := make([]time.Duration, 0, n)
	for range n {
		start := time.Now()
		c, err := dial(addr)
		if err != nil {
			return err
		}
		_ = c.SetDeadline(time.Now().Add(30 * time.Second))
		if _, err := c.Write([]byte{'x'}); err != nil {
			c.Close()
			return err
		}
		var b [1]byte
		if _, err := io.ReadFull(c, b[:]); err != nil {
			c.Close()
			return fmt.Errorf("first byte: %w", err)
		}
		times = append(times, time.Since(start))
		c.Close()
	}
	rest := slices.Clone(times[1:])
	slices.Sort(rest)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1e3 }
	fmt.Printf("n=%d ttfb_ms=%.1f first_ms=%.1f max_ms=%.1f\n", n, ms(rest[len(rest)/2]), ms(times[0]), ms(rest[len(rest)-1]))
	return nil
}

// fair measures how a bulk transfer on one connection slows another's
// round trips: n round trips of size bytes on an interactive connection,
// idle, then while a second connection pushes bulk data into the sink as
// fast as it can, then idle again. It prints the p50 of each (the idle
// value is the median of both idle runs) and their ratio. Through
// "spipe connect --mux" both connections are streams of one carrier.
func fair(addr string, n, size int) error {
	c, err := dial(addr)
	if err != nil {
		return err
	}
	defer c.Close()
	msg, back := make([]byte, size), make([]byte, size)
	round := func(k int) ([]time.Duration, error) { return roundTrips(c, msg, back, k) }
	if _, err := round(warmUp); err != nil {
		return err
	}
	idle1, err := round(n)
	if err != nil {
		return err
	}

	b, err := dial(addr)
	if err != nil {
		return err
	}
	var sent int64
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		buf := make([]byte, 256<<10)
		buf[0] = sinkMark
		for {
			select {
			case <-stop:
				return
			default:
			}
			m, err := b.Write(buf)
			sent += int64(m)
			if err != nil {
				return
			}
			buf[0] = 0
		}
	}()
	time.Sleep(300 * time.Millisecond) // the bulk stream at full speed
	t0 := time.Now()
	loaded, err := round(n)
	d := time.Since(t0)
	close(stop)
	b.Close() // a reset: the sink's count is not needed
	wg.Wait()
	if err != nil {
		return err
	}
	idle2, err := round(n)
	if err != nil {
		return err
	}
	idle := percentile(append(idle1, idle2...), 50)
	loaded50 := percentile(loaded, 50)
	fmt.Printf("n=%d idle_p50_us=%.1f loaded_p50_us=%.1f loaded_p99_us=%.1f ratio=%.2f bulk_mbps=%.1f\n", n, us(idle), us(loaded50),
		us(percentile(loaded, 99)), float64(loaded50)/float64(idle), float64(sent)/1e6/(d.Seconds()+0.3))
	return nil
}

// warmUp is how many round trips run, untimed, before timed ones.
const warmUp = 200

// roundTrips times k round trips of msg on c, each read back into back.
func roundTrips(c net.Conn, msg, back []byte, k int) ([]time.Duration, error) {
	t := make([]time.Duration, 0, k)
	for range k {
		start := time.Now()
		if _, err := c.Write(msg); err != nil {
			return nil, err
		}
		if _, err := io.ReadFull(c, back); err != nil {
			return nil, err
		}
		t = append(t, time.Since(start))
	}
	return t, nil
}

// percentile is the p-th percentile of t (t itself is left unsorted).
func percentile(t []time.Duration, p int) time.Duration {
	t = slices.Clone(t)
	slices.Sort(t)
	return t[len(t)*p/100]
}

// us is d in microseconds.
func us(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }
