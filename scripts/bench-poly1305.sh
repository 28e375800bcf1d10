#!/usr/bin/env bash
# Poly1305 rows of `make bench-compare`: internal/poly1305 on every kernel
# this CPU runs (the one dispatch picks first) beside x/crypto's poly1305
# (amd64 assembly), at 64 B, 256 B, 1 KiB, 8 KiB and 64 KiB, plus the paired
# benchmark that alternates ours and x/crypto in ~20 µs slices so load from
# other processes hits both alike. Everything is pinned to one core and
# interleaved round by round; the table shows medians of BENCHCOUNT runs and
# the ratios of those medians. OpenSSL 3's `openssl speed` has no
# stand-alone Poly1305, so it appears only in the AEAD rows.
#
# Environment: GO (go), BENCHCOUNT (6), BENCHTIME (300ms), BENCH_CPU (the
# core to pin to, default 1), BENCHOUT (a fresh temporary directory).
set -euo pipefail
cd "$(dirname "$0")/.."

source scripts/lib/bench.sh

"$GO" test -c -o "$out/poly1305.test" ./internal/poly1305

: >"$out/poly1305.txt"
: >"$out/paired.txt"
for round in $(seq "$count"); do
  echo "bench-poly1305: round $round of $count" >&2
  "${pin[@]}" "$out/poly1305.test" -test.run '^$' -test.benchmem -test.benchtime "$benchtime" \
    -test.bench "^BenchmarkPoly1305\$/.*/^($sizes)\$" >>"$out/poly1305.txt"
  "${pin[@]}" "$out/poly1305.test" -test.run '^$' -test.benchtime "$benchtime" \
    -test.bench "^BenchmarkPaired\$/^($sizes)\$" >>"$out/paired.txt"
done

median MB/s "$out/poly1305.txt" >"$out/medians.txt"
median speedup-vs-xcrypto "$out/paired.txt" | sed 's/^/speedup:/' >>"$out/medians.txt"

# Kernels in the order the benchmark ran them: best first.
kernels=$(awk '/^BenchmarkPoly1305\// { split($1, p, "/"); if (p[2] != "x-crypto" && !seen[p[2]]++) print p[2] }' "$out/poly1305.txt")
best=$(echo "$kernels" | head -n 1)
x="BenchmarkPoly1305/x-crypto/SIZE"
echo
echo "Poly1305, MB/s (medians of $count, pinned to CPU $cpu; $(grep -m1 '^cpu:' "$out/poly1305.txt" | cut -d' ' -f2-))"
header
for k in $kernels; do
  label="ours, $k"
  [ "$k" = "$best" ] && label="ours, $k (dispatch default)"
  row "$label" "BenchmarkPoly1305/$k/SIZE"
done
row "x/crypto poly1305 (amd64 asm)" "$x"
ratio "  $best / x/crypto" "BenchmarkPoly1305/$best/SIZE" "$x"
row "  paired: x/crypto time / ours" "speedup:BenchmarkPaired/SIZE"
echo "    target: 64KiB >= 2.5x x/crypto"
if command -v benchstat >/dev/null 2>&1; then
  echo
  benchstat -filter '.unit:B/s' "$out/poly1305.txt" || true
fi
echo "raw results in $out"
