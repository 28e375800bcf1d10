# Shared by the bench-*.sh scripts (source it from the repository root):
# settings from the environment, pinning, medians of repeated runs, and the
# rows of the tables they print.
#
# Environment: GO (go), BENCHCOUNT (6), BENCHTIME (300ms), BENCH_CPU (the
# core to pin to, default 1), BENCHOUT (a fresh temporary directory).

GO=${GO:-go}
count=${BENCHCOUNT:-6}
benchtime=${BENCHTIME:-300ms}
cpu=${BENCH_CPU:-1}
out=${BENCHOUT:-$(mktemp -d)}
mkdir -p "$out"
# Every contender runs on the same core, so they share its cache and clock.
pin=()
if command -v taskset >/dev/null 2>&1; then
  pin=(taskset -c "$cpu")
fi
sizes='64B|256B|1KiB|8KiB|64KiB'
label_width=${label_width:-40}

# median UNIT FILE...: for each benchmark name (GOMAXPROCS suffix dropped),
# the median of the values written before UNIT, as "name value" lines.
median() {
  local unit=$1; shift
  awk -v unit="$unit" '/^Benchmark/ { name = $1; sub(/-[0-9]+$/, "", name)
         for (i = 1; i <= NF; i++) if ($(i+1) == unit) v[name] = v[name] " " $i }
       END { for (n in v) { k = split(substr(v[n], 2), a, " ")
               for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
               m = (k % 2) ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2
               printf "%s %.2f\n", n, m } }' "$@"
}

# get NAME: the median recorded for NAME in $out/medians.txt.
get() { awk -v n="$1" '$1 == n { print $2 }' "$out/medians.txt"; }

# header: the size columns of a table.
header() { printf "%-${label_width}s%10s%10s%10s%10s%10s\n" "" 64B 256B 1KiB 8KiB 64KiB; }

# row LABEL PATTERN: one table row, PATTERN naming a median with SIZE in
# place of the size.
row() {
  local label=$1 pat=$2
  printf "%-${label_width}s" "$label"
  for s in 64B 256B 1KiB 8KiB 64KiB; do printf '%10s' "$(get "${pat//SIZE/$s}")"; done
  echo
}

# ratio LABEL NUM DEN: the ratio of two medians per size ("-" if missing).
ratio() {
  local label=$1 num=$2 den=$3
  printf "%-${label_width}s" "$label"
  for s in 64B 256B 1KiB 8KiB 64KiB; do
    printf '%10s' "$(awk -v a="$(get "${num//SIZE/$s}")" -v b="$(get "${den//SIZE/$s}")" \
      'BEGIN { if (a == "" || b == "" || b == 0) print "-"; else printf "%.2fx", a / b }')"
  done
  echo
}
