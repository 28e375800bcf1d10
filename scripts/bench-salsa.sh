#!/usr/bin/env bash
# Salsa20 rows of `make bench-compare`: our Salsa20/20 against x/crypto's
# Salsa20 (amd64 SSE2 assembly) and against our own ChaCha20/20, at 64 B,
# 256 B, 1 KiB, 8 KiB and 64 KiB, plus each SIMD tier forced. All runs are
# pinned to one core and interleaved round by round, so load from other
# processes hits every contender alike; the table shows medians of
# BENCHCOUNT runs and the ratios of those medians. Raw results stay in
# BENCHOUT for benchstat.
#
# Needs benchmark names of the form .../impl=ours and .../impl=xcrypto in
# pkg/salsa20 and pkg/chacha20, pkg/salsa20's BenchmarkPaired/<size> and
# internal/salsacore's BenchmarkKernels/<kernel>/r20/<size>.
#
# Environment: GO (go), BENCHCOUNT (6), BENCHTIME (300ms), BENCH_CPU (the
# core to pin to, default 1), BENCHOUT (a fresh temporary directory).
set -euo pipefail
cd "$(dirname "$0")/.."

label_width=34
source scripts/lib/bench.sh

"$GO" test -c -o "$out/salsa20.test" ./pkg/salsa20
"$GO" test -c -o "$out/chacha20.test" ./pkg/chacha20
"$GO" test -c -o "$out/salsacore.test" ./internal/salsacore

: >"$out/salsa.txt"
: >"$out/chacha.txt"
: >"$out/kernels.txt"
: >"$out/paired.txt"
for round in $(seq "$count"); do
  echo "bench-salsa: round $round of $count" >&2
  "${pin[@]}" "$out/salsa20.test" -test.run '^$' -test.benchmem -test.benchtime "$benchtime" \
    -test.bench "^BenchmarkXORKeyStream\$/^salsa20\$/^($sizes)\$/" >>"$out/salsa.txt"
  "${pin[@]}" "$out/chacha20.test" -test.run '^$' -test.benchmem -test.benchtime "$benchtime" \
    -test.bench "^BenchmarkXORKeyStream\$/^chacha20\$/^($sizes)\$/^impl=ours\$" >>"$out/chacha.txt"
  "${pin[@]}" "$out/salsacore.test" -test.run '^$' -test.benchmem -test.benchtime "$benchtime" \
    -test.bench "^BenchmarkKernels\$/^(avx512|avx2|ssse3)\$/^r20\$/^($sizes)\$" >>"$out/kernels.txt"
  "${pin[@]}" "$out/salsa20.test" -test.run '^$' -test.benchtime "$benchtime" \
    -test.bench "^BenchmarkPaired\$/^($sizes)\$" >>"$out/paired.txt"
done

median MB/s "$out/salsa.txt" "$out/chacha.txt" "$out/kernels.txt" >"$out/medians.txt"
# The paired benchmark's metrics, as pseudo-benchmarks NAME/METRIC.
awk '/^BenchmarkPaired/ { name = $1; sub(/-[0-9]+$/, "", name)
       for (i = 5; i < NF; i++) if ($(i+1) ~ /^(salsa|xcrypto|chacha)-MB\/s$|^speed|^cpu-speed|^salsa-cpu/) print name "/" $(i+1), $i, "MB/s" }' \
  "$out/paired.txt" | awk '{ print "Benchmark" substr($1, 10), $2, "MB/s" }' >"$out/paired-flat.txt"
median MB/s "$out/paired-flat.txt" | sed 's/^/P/' >>"$out/medians.txt"
awk '/^BenchmarkKernels/ { name = $1; sub(/-[0-9]+$/, "", name)
       for (i = 5; i < NF; i++) if ($(i+1) == "cpu-MB/s") print "BenchmarkCPU" substr(name, 10), $i, "MB/s" }' "$out/kernels.txt" |
  median MB/s /dev/stdin >>"$out/medians.txt"

# The best tier this CPU runs is the first one the kernel benchmarks saw.
kernel=generic
for k in avx512 avx2 ssse3; do
  if grep -q "^BenchmarkKernels/$k/" "$out/medians.txt"; then kernel=$k; break; fi
done
echo
echo "Salsa20/20, MB/s (medians of $count, pinned to CPU $cpu)"
header
row "ours ($kernel)" "BenchmarkXORKeyStream/salsa20/SIZE/impl=ours"
row "x/crypto salsa20 (SSE2 asm)" "BenchmarkXORKeyStream/salsa20/SIZE/impl=xcrypto"
ratio "  ours / x/crypto  (target >= 6x)" "BenchmarkXORKeyStream/salsa20/SIZE/impl=ours" "BenchmarkXORKeyStream/salsa20/SIZE/impl=xcrypto"
row "ours ChaCha20/20" "BenchmarkXORKeyStream/chacha20/SIZE/impl=ours"
ratio "  Salsa / ChaCha  (target >= 0.9x)" "BenchmarkXORKeyStream/salsa20/SIZE/impl=ours" "BenchmarkXORKeyStream/chacha20/SIZE/impl=ours"
row "kernel avx512 (whole blocks)" "BenchmarkKernels/avx512/r20/SIZE"
row "kernel avx2 forced" "BenchmarkKernels/avx2/r20/SIZE"
row "kernel ssse3 forced" "BenchmarkKernels/ssse3/r20/SIZE"
echo
echo "Paired runs (the three contenders alternate in ~20 µs slices; medians of $count):"
header
row "ours, fastest slice MB/s" "PBenchmarkPaired/SIZE/salsa-MB/s"
row "x/crypto, fastest slice MB/s" "PBenchmarkPaired/SIZE/xcrypto-MB/s"
row "ChaCha20, fastest slice MB/s" "PBenchmarkPaired/SIZE/chacha-MB/s"
ratio "  ours / x/crypto, fastest slices" "PBenchmarkPaired/SIZE/salsa-MB/s" "PBenchmarkPaired/SIZE/xcrypto-MB/s"
ratio "  Salsa / ChaCha, fastest slices" "PBenchmarkPaired/SIZE/salsa-MB/s" "PBenchmarkPaired/SIZE/chacha-MB/s"
row "  ours / x/crypto, summed time" "PBenchmarkPaired/SIZE/speedup-vs-xcrypto"
row "  Salsa / ChaCha, summed time" "PBenchmarkPaired/SIZE/speed-vs-chacha"
row "ours, thread CPU time MB/s" "PBenchmarkPaired/SIZE/salsa-cpu-MB/s"
row "  ours / x/crypto, CPU time" "PBenchmarkPaired/SIZE/cpu-speedup-vs-xcrypto"
row "  Salsa / ChaCha, CPU time" "PBenchmarkPaired/SIZE/cpu-speed-vs-chacha"
echo
echo "Kernels forced, whole blocks, thread CPU time MB/s (medians of $count):"
header
row "avx512" "BenchmarkCPUKernels/avx512/r20/SIZE"
row "avx2" "BenchmarkCPUKernels/avx2/r20/SIZE"
row "ssse3" "BenchmarkCPUKernels/ssse3/r20/SIZE"
echo "(libsodium's AVX2 Salsa20 measured ~2,470 MB/s at 64 KiB on this machine class)"
if command -v benchstat >/dev/null 2>&1; then
  echo
  benchstat -col /impl -filter '.unit:B/s' "$out/salsa.txt" || true
fi
echo "raw results in $out"
