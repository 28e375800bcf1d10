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

GO=${GO:-go}
count=${BENCHCOUNT:-6}
benchtime=${BENCHTIME:-300ms}
cpu=${BENCH_CPU:-1}
out=${BENCHOUT:-$(mktemp -d)}
mkdir -p "$out"
pin=()
if command -v taskset >/dev/null 2>&1; then
  pin=(taskset -c "$cpu")
fi

"$GO" test -c -o "$out/poly1305.test" ./internal/poly1305

sizes='64B|256B|1KiB|8KiB|64KiB'
: >"$out/poly1305.txt"
: >"$out/paired.txt"
for round in $(seq "$count"); do
  echo "bench-poly1305: round $round of $count" >&2
  "${pin[@]}" "$out/poly1305.test" -test.run '^$' -test.benchmem -test.benchtime "$benchtime" \
    -test.bench "^BenchmarkPoly1305\$/.*/^($sizes)\$" >>"$out/poly1305.txt"
  "${pin[@]}" "$out/poly1305.test" -test.run '^$' -test.benchtime "$benchtime" \
    -test.bench "^BenchmarkPaired\$/^($sizes)\$" >>"$out/paired.txt"
done

# Medians per benchmark name (GOMAXPROCS suffix dropped) of the value
# before the unit given as the first argument.
median() {
  local unit=$1; shift
  awk -v unit="$unit" '/^Benchmark/ { name = $1; sub(/-[0-9]+$/, "", name)
         for (i = 1; i <= NF; i++) if ($(i+1) == unit) v[name] = v[name] " " $i }
       END { for (n in v) { k = split(substr(v[n], 2), a, " ")
               for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
               m = (k % 2) ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2
               printf "%s %s\n", n, m } }' "$@"
}
median MB/s "$out/poly1305.txt" >"$out/medians.txt"
median speedup-vs-xcrypto "$out/paired.txt" | sed 's/^/speedup:/' >>"$out/medians.txt"

get() { awk -v n="$1" '$1 == n { print $2 }' "$out/medians.txt"; }
row() { # label, then one benchmark name pattern with SIZE for the size
  local label=$1 pat=$2
  printf '%-40s' "$label"
  for s in 64B 256B 1KiB 8KiB 64KiB; do printf '%10s' "$(get "${pat//SIZE/$s}")"; done
  echo
}
ratio() { # label, numerator pattern, denominator pattern
  local label=$1 num=$2 den=$3
  printf '%-40s' "$label"
  for s in 64B 256B 1KiB 8KiB 64KiB; do
    printf '%10s' "$(awk -v a="$(get "${num//SIZE/$s}")" -v b="$(get "${den//SIZE/$s}")" \
      'BEGIN { if (a == "" || b == "" || b == 0) print "-"; else printf "%.2fx", a / b }')"
  done
  echo
}

# Kernels in the order the benchmark ran them: best first.
kernels=$(awk '/^BenchmarkPoly1305\// { split($1, p, "/"); if (p[2] != "x-crypto" && !seen[p[2]]++) print p[2] }' "$out/poly1305.txt")
best=$(echo "$kernels" | head -n 1)
x="BenchmarkPoly1305/x-crypto/SIZE"
echo
echo "Poly1305, MB/s (medians of $count, pinned to CPU $cpu; $(grep -m1 '^cpu:' "$out/poly1305.txt" | cut -d' ' -f2-))"
printf '%-40s%10s%10s%10s%10s%10s\n' "" 64B 256B 1KiB 8KiB 64KiB
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
