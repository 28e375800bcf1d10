#!/usr/bin/env bash
# ChaCha20 rows of `make bench-compare`: our ChaCha20 (pkg/chacha20, the path
# dispatch picks) against OpenSSL's `openssl speed -evp chacha20` and
# x/crypto's chacha20, and our AVX2 kernel forced against OpenSSL with
# AVX-512 masked off, at 64 B, 256 B, 1 KiB, 8 KiB and 64 KiB. Everything is
# pinned to one core and interleaved round by round, so load from other
# processes hits every contender alike; the table shows medians of
# BENCHCOUNT runs and the ratios of those medians. OpenSSL's figures are
# written as Go benchmark lines next to ours in BENCHOUT, so benchstat reads
# all of them.
#
# A second table compares CPU time instead of wall time (our kernels'
# cpu-MB/s metric against `openssl speed` without -elapsed): on a machine
# shared with other busy processes it is much steadier. BENCH_CPUTIME=0
# skips it.
#
# Environment: GO (go), BENCHCOUNT (6), BENCHTIME (300ms), OPENSSL_SECONDS
# (1), BENCH_CPU (the core to pin to, default 1), BENCH_CPUTIME (1),
# BENCHOUT (a fresh temporary directory).
set -euo pipefail
cd "$(dirname "$0")/.."

source scripts/lib/bench.sh
osecs=${OPENSSL_SECONDS:-1}
cputime=${BENCH_CPUTIME:-1}
command -v openssl >/dev/null || { echo "bench-compare needs openssl (apt-get install openssl)" >&2; exit 1; }

"$GO" test -c -o "$out/chacha20.test" ./pkg/chacha20
"$GO" test -c -o "$out/chachacore.test" ./internal/chachacore

declare -A bytes=([64B]=64 [256B]=256 [1KiB]=1024 [8KiB]=8192 [64KiB]=65536)

# openssl_bench NAME TIMING [ia32cap]: one `openssl speed` run per size,
# written as "BenchmarkOpenSSL/NAME/SIZE 1 <ns> ns/op <MB/s> MB/s" lines.
# TIMING "-elapsed" makes it report wall time, as Go does; "" reports its
# CPU time (compared with our kernels' cpu-MB/s). -mr prints
# "+F:...:<bytes per second>".
openssl_bench() {
  local name=$1 timing=$2 cap=${3-}
  for s in 64B 256B 1KiB 8KiB 64KiB; do
    local n=${bytes[$s]} bps
    bps=$(env ${cap:+OPENSSL_ia32cap="$cap"} "${pin[@]}" openssl speed $timing -mr -seconds "$osecs" \
      -bytes "$n" -evp chacha20 2>/dev/null | awk -F: '/^\+F:/ { print $4 }')
    awk -v name="$name" -v s="$s" -v n="$n" -v bps="$bps" \
      'BEGIN { printf "BenchmarkOpenSSL/%s/%s 1 %.1f ns/op %.2f MB/s\n", name, s, 1e9 * n / bps, bps / 1e6 }'
  done
}

: >"$out/chacha.txt"
: >"$out/kernels.txt"
: >"$out/openssl.txt"
for round in $(seq "$count"); do
  echo "bench-compare: round $round of $count" >&2
  "${pin[@]}" "$out/chacha20.test" -test.run '^$' -test.benchmem -test.benchtime "$benchtime" \
    -test.bench "^BenchmarkXORKeyStream\$/^chacha20\$/^($sizes)\$/" >>"$out/chacha.txt"
  "${pin[@]}" "$out/chachacore.test" -test.run '^$' -test.benchmem -test.benchtime "$benchtime" \
    -test.bench "^BenchmarkKernels\$/^(avx512|avx2)\$/^r20\$/^($sizes)\$" >>"$out/kernels.txt"
  # ~0xd0230000 clears the AVX-512 capability bits (F, DQ, IFMA, BW, VL) in
  # OpenSSL's ia32cap word 2; an empty value would disable all SIMD.
  openssl_bench default -elapsed >>"$out/openssl.txt"
  openssl_bench avx2 -elapsed ":~0xd0230000" >>"$out/openssl.txt"
  if [ "$cputime" = 1 ]; then
    openssl_bench cpu-default "" >>"$out/openssl.txt"
    openssl_bench cpu-avx2 "" ":~0xd0230000" >>"$out/openssl.txt"
  fi
done

median MB/s "$out/chacha.txt" "$out/kernels.txt" "$out/openssl.txt" >"$out/medians.txt"
# Our kernels' cpu-MB/s medians, named .../cpu.
median cpu-MB/s "$out/kernels.txt" | awk '{ print $1 "/cpu", $2 }' >>"$out/medians.txt"

# The best tier this CPU runs is the first one the kernel benchmarks saw.
kernel=generic
for k in avx512 avx2; do
  if grep -q "^BenchmarkKernels/$k/" "$out/medians.txt"; then kernel=$k; break; fi
done
ours="BenchmarkXORKeyStream/chacha20/SIZE/impl=ours"
echo
echo "ChaCha20/20, MB/s (medians of $count, pinned to CPU $cpu; $(grep -m1 '^cpu:' "$out/chacha.txt" | cut -d' ' -f2-))"
header
row "ours (pkg/chacha20, $kernel)" "$ours"
row "OpenSSL $(openssl version | cut -d' ' -f2) (AVX-512)" "BenchmarkOpenSSL/default/SIZE"
ratio "  ours / OpenSSL" "$ours" "BenchmarkOpenSSL/default/SIZE"
echo "    targets: 64KiB >= 1.2x, 8KiB >= 1.1x, 256B >= 1.0x"
row "x/crypto chacha20 (pure Go)" "BenchmarkXORKeyStream/chacha20/SIZE/impl=xcrypto"
ratio "  ours / x/crypto" "$ours" "BenchmarkXORKeyStream/chacha20/SIZE/impl=xcrypto"
echo "    targets: 64KiB >= 8x, 64B >= 1.0x"
row "kernel avx512 (whole blocks)" "BenchmarkKernels/avx512/r20/SIZE"
row "kernel avx2 forced (whole blocks)" "BenchmarkKernels/avx2/r20/SIZE"
row "OpenSSL, AVX-512 masked off" "BenchmarkOpenSSL/avx2/SIZE"
ratio "  avx2 / OpenSSL AVX2" "BenchmarkKernels/avx2/r20/SIZE" "BenchmarkOpenSSL/avx2/SIZE"
echo "    target: 64KiB >= 1.0x"
if [ "$cputime" = 1 ]; then
  echo
  echo "CPU time instead of wall time, MB/s (same runs; kernels on whole blocks)"
  header
  row "kernel avx512" "BenchmarkKernels/avx512/r20/SIZE/cpu"
  row "OpenSSL (AVX-512), CPU time" "BenchmarkOpenSSL/cpu-default/SIZE"
  ratio "  avx512 / OpenSSL" "BenchmarkKernels/avx512/r20/SIZE/cpu" "BenchmarkOpenSSL/cpu-default/SIZE"
  row "kernel avx2 forced" "BenchmarkKernels/avx2/r20/SIZE/cpu"
  row "OpenSSL, AVX-512 masked off, CPU time" "BenchmarkOpenSSL/cpu-avx2/SIZE"
  ratio "  avx2 / OpenSSL AVX2" "BenchmarkKernels/avx2/r20/SIZE/cpu" "BenchmarkOpenSSL/cpu-avx2/SIZE"
fi
echo "raw results in $out (benchstat $out/chacha.txt ...)"
