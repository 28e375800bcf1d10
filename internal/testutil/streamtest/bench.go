package streamtest

// BenchSizes are the message sizes of the packages' XORKeyStream
// benchmarks, from one block to long bulk transfers. The timed loops stay
// in each package, calling the cipher directly: a shared loop would add an
// indirect call to every iteration of the short sizes.
var BenchSizes = []struct {
	Name string
	N    int
}{
	{"64B", 64}, {"256B", 256}, {"1KiB", 1 << 10}, {"8KiB", 8 << 10},
	{"64KiB", 64 << 10}, {"1MiB", 1 << 20},
}
