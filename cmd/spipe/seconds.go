package main

import (
	"errors"
	"math"
	"strconv"
	"time"
)

// durationValue is a duration flag that also takes a bare number of
// seconds, as spiped's -o does ("-o 5" is 5 s).
type durationValue struct{ d *time.Duration }

func (v durationValue) String() string { return v.d.String() }

func (v durationValue) Type() string { return "duration" }

func (v durationValue) Set(s string) error {
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		if math.IsNaN(f) || math.IsInf(f, 0) || math.Abs(f) > math.MaxInt64/float64(time.Second) {
			return errors.New("want a duration such as 10s, or a number of seconds")
		}
		*v.d = time.Duration(f * float64(time.Second))
		return nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return errors.New("want a duration such as 10s, or a number of seconds")
	}
	*v.d = d
	return nil
}
