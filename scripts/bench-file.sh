#!/usr/bin/env bash
# `make bench-file`: issue 25's targets for spipe seal / spipe open, in one
# run, each printed with its verdict:
#
#   1. seal and open of a 1 GiB file with one worker (-j 1), pinned to one
#      core, against Debian's age (X25519 recipient) on the same file and
#      core: at least 2x;
#   2. the same against our AEAD's own 64 KiB speed (pkg/aead
#      BenchmarkSeal/BenchmarkOpen ChaCha20Poly1305/64KiB/ours, pinned to
#      the same core, in the same rounds): at least 0.8x;
#   3. two workers (-j 2, both cores) against one (-j 1, both cores
#      allowed): at least 1.7x;
#   4. a 1 MiB range at the end of a 4 GiB encrypted file (--offset
#      --length, the whole process): at most 20 ms; age's time to the same
#      range (it must decrypt everything) beside it;
#   5. peak RSS of spipe seal and spipe open of a 4 GiB file with the
#      default workers (the CPUs): at most workers x 4 x chunk size + 16 MiB
#      (the chunk size is sealed.DefaultChunkSize).
#
# A context row, with no target, shows what reading the 1 GiB file costs
# on its own (dd of=/dev/null with 256 KiB reads, the tool's chunk size,
# pinned): both tools pay it, the in-memory AEAD benchmark does not.
#
# Contenders alternate within each of REPS rounds and the table shows
# medians. Files live in BENCH_FILE_DIR (default: a fresh directory in
# /dev/shm if it has 12 GiB free, else under TMPDIR), so the figures are
# the programs' CPU and not a disk's; every big file is deleted at the end
# (and a 4 GiB one as soon as its measurements are done).
#
# Environment: GO (go), REPS (5), RANGE_REPS (11), BENCH_CPU (1),
# BENCHTIME (300ms), BENCH_FILE_DIR. Needs age (apt-get install age) and
# GNU time (apt-get install time).
set -euo pipefail
cd "$(dirname "$0")/.."

GO=${GO:-go}
reps=${REPS:-5}
range_reps=${RANGE_REPS:-11}
cpu=${BENCH_CPU:-1}
benchtime=${BENCHTIME:-300ms}
for tool in age age-keygen taskset; do
  command -v "$tool" >/dev/null || { echo "bench-file needs $tool (apt-get install age util-linux)" >&2; exit 1; }
done
[ -x /usr/bin/time ] || { echo "bench-file needs GNU time (apt-get install time)" >&2; exit 1; }

if [ -n "${BENCH_FILE_DIR:-}" ]; then
  dir=$(mktemp -d "$BENCH_FILE_DIR/bench-file.XXXXXX")
elif [ "$(df -k --output=avail /dev/shm 2>/dev/null | tail -1)" -gt $((12 << 20)) ] 2>/dev/null; then
  dir=$(mktemp -d /dev/shm/bench-file.XXXXXX)
else
  dir=$(mktemp -d)
fi
trap 'rm -rf "$dir"' EXIT
echo "bench-file: files in $dir" >&2

"$GO" build -o "$dir/spipe" ./cmd/spipe
"$GO" test -c -o "$dir/aead.test" ./pkg/aead
spipe=$dir/spipe
"$spipe" keygen "$dir/key" >/dev/null
age-keygen -o "$dir/age.id" 2>/dev/null
recipient=$(age-keygen -y "$dir/age.id")
pin=(taskset -c "$cpu")
gib=$((1 << 30))

# seconds CMD...: the wall time of CMD in seconds (its output is its own
# business: redirect inside CMD).
seconds() {
  local t0 t1
  t0=$(date +%s%N)
  "$@"
  t1=$(date +%s%N)
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f\n", (b - a) / 1e9 }'
}

# med FILE: the median of the numbers in FILE.
med() { sort -g "$1" | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# mbps SECONDS BYTES: MB/s (10^6 bytes, as go test prints).
mbps() { awk -v s="$1" -v n="$2" 'BEGIN { printf "%.0f", n / s / 1e6 }'; }

# verdict VALUE OP TARGET: "ok" or "MISSED".
verdict() { awk -v v="$1" -v op="$2" -v t="$3" 'BEGIN { ok = (op == ">=") ? v >= t : v <= t; print ok ? "ok" : "MISSED" }'; }

# The 1 GiB plaintext: random, so nothing compresses or skips; sealed
# once by each tool for the open rounds. Timed seals write to /dev/null
# (both tools alike): what is measured is the tool, not tmpfs allocating
# and freeing a gigabyte of pages.
head -c "$gib" /dev/urandom >"$dir/plain"
"$spipe" seal -k "$dir/key" -o "$dir/plain.spipe" "$dir/plain"
age -r "$recipient" -o "$dir/plain.age" "$dir/plain"
rm -f "$dir"/*.times

for round in $(seq "$reps"); do
  echo "bench-file: round $round of $reps" >&2
  seconds "${pin[@]}" "$spipe" seal -j 1 -k "$dir/key" -o /dev/null "$dir/plain" >>"$dir/seal1.times"
  seconds "${pin[@]}" age -r "$recipient" -o /dev/null "$dir/plain" >>"$dir/ageseal.times"
  seconds "${pin[@]}" "$spipe" open -j 1 -k "$dir/key" -o /dev/null "$dir/plain.spipe" >>"$dir/open1.times"
  seconds "${pin[@]}" age -d -i "$dir/age.id" -o /dev/null "$dir/plain.age" >>"$dir/ageopen.times"
  # One worker and two with both cores allowed: the scaling target.
  seconds "$spipe" seal -j 1 -k "$dir/key" -o /dev/null "$dir/plain" >>"$dir/seal1free.times"
  seconds "$spipe" seal -j 2 -k "$dir/key" -o /dev/null "$dir/plain" >>"$dir/seal2.times"
  seconds "$spipe" open -j 1 -k "$dir/key" -o /dev/null "$dir/plain.spipe" >>"$dir/open1free.times"
  seconds "$spipe" open -j 2 -k "$dir/key" -o /dev/null "$dir/plain.spipe" >>"$dir/open2.times"
  "${pin[@]}" "$dir/aead.test" -test.run '^$' -test.benchtime "$benchtime" \
    -test.bench '^Benchmark(Seal|Open)$/^ChaCha20Poly1305$/^64KiB$/^ours$' >>"$dir/aead.txt"
  seconds "${pin[@]}" dd if="$dir/plain" of=/dev/null bs=256K status=none >>"$dir/read.times"
done
# The plaintext really came back.
"$spipe" open -k "$dir/key" "$dir/plain.spipe" | cmp - "$dir/plain"
rm -f "$dir/plain" "$dir/plain.spipe" "$dir/plain.age"

aead_seal=$(awk '/^BenchmarkSeal\/ChaCha20Poly1305\/64KiB\/ours/ { for (i = 1; i <= NF; i++) if ($(i+1) == "MB/s") print $i }' "$dir/aead.txt" >"$dir/aeadseal.mbs"; med "$dir/aeadseal.mbs")
aead_open=$(awk '/^BenchmarkOpen\/ChaCha20Poly1305\/64KiB\/ours/ { for (i = 1; i <= NF; i++) if ($(i+1) == "MB/s") print $i }' "$dir/aead.txt" >"$dir/aeadopen.mbs"; med "$dir/aeadopen.mbs")

# The 4 GiB file: sealed from a stream of zeros (the cipher does not care,
# and nothing of 4 GiB sits in plaintext), with GNU time's peak RSS.
big=$((4 << 30))
/usr/bin/time -f %M -o "$dir/sealrss" sh -c 'head -c "$1" /dev/zero | "$2" seal -k "$3" -o "$4"' _ "$big" "$spipe" "$dir/key" "$dir/big.spipe"
/usr/bin/time -f %M -o "$dir/openrss" sh -c '"$1" open -k "$2" "$3" >/dev/null' _ "$spipe" "$dir/key" "$dir/big.spipe"
# `sh -c` is in the way of %M only if it is the bigger process; it is not
# (a few hundred KiB), and GNU time reports the largest child.
for i in $(seq "$range_reps"); do
  seconds sh -c '"$1" open -k "$2" --offset "$3" --length 1048576 "$4" >/dev/null' _ \
    "$spipe" "$dir/key" $((big - (1 << 20))) "$dir/big.spipe" >>"$dir/range.times"
done
# And the range is right: zeros, exactly 1 MiB.
[ "$("$spipe" open -k "$dir/key" --offset $((big - (1 << 20))) --length 1048576 "$dir/big.spipe" | tr -d '\0' | wc -c)" = 0 ]
[ "$("$spipe" open -k "$dir/key" --offset $((big - (1 << 20))) --length 1048576 "$dir/big.spipe" | wc -c)" = 1048576 ]
rm -f "$dir/big.spipe"
head -c "$big" /dev/zero | age -r "$recipient" -o "$dir/big.age"
seconds sh -c 'age -d -i "$1" "$2" | tail -c 1048576 >/dev/null' _ "$dir/age.id" "$dir/big.age" >"$dir/agerange.times"
rm -f "$dir/big.age"

workers=$(nproc)
chunk=$(awk '/^const DefaultChunkSize = 1 << / { print 2 ^ $NF }' pkg/spipe/sealed/format.go)
rss_limit_kib=$(( (workers * 4 * chunk + (16 << 20)) / 1024 ))

s1=$(mbps "$(med "$dir/seal1.times")" $gib); as=$(mbps "$(med "$dir/ageseal.times")" $gib)
o1=$(mbps "$(med "$dir/open1.times")" $gib); ao=$(mbps "$(med "$dir/ageopen.times")" $gib)
s1f=$(mbps "$(med "$dir/seal1free.times")" $gib); s2=$(mbps "$(med "$dir/seal2.times")" $gib)
o1f=$(mbps "$(med "$dir/open1free.times")" $gib); o2=$(mbps "$(med "$dir/open2.times")" $gib)
rms=$(awk -v s="$(med "$dir/range.times")" 'BEGIN { printf "%.1f", s * 1000 }')
ams=$(awk -v s="$(med "$dir/agerange.times")" 'BEGIN { printf "%.0f", s * 1000 }')
srss=$(( $(cat "$dir/sealrss") )); orss=$(( $(cat "$dir/openrss") ))

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
echo
echo "bench-file: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) CPUs; medians of $reps rounds (range: $range_reps), one-worker runs pinned to core $cpu"
printf '%-52s %12s %12s %8s  %s\n' "target" "spipe" "peer" "ratio" "verdict"
row() { printf '%-52s %12s %12s %8s  %s\n' "$@"; }
r=$(ratio "$s1" "$as"); row "seal 1 GiB -j 1 vs age (>= 2x), MB/s" "$s1" "$as" "${r}x" "$(verdict "$r" ">=" 2)"
r=$(ratio "$o1" "$ao"); row "open 1 GiB -j 1 vs age (>= 2x), MB/s" "$o1" "$ao" "${r}x" "$(verdict "$r" ">=" 2)"
r=$(ratio "$s1" "$aead_seal"); row "seal 1 GiB -j 1 vs AEAD 64 KiB seal (>= 0.8x), MB/s" "$s1" "$aead_seal" "${r}x" "$(verdict "$r" ">=" 0.8)"
r=$(ratio "$o1" "$aead_open"); row "open 1 GiB -j 1 vs AEAD 64 KiB open (>= 0.8x), MB/s" "$o1" "$aead_open" "${r}x" "$(verdict "$r" ">=" 0.8)"
row "context: read 1 GiB (dd, 256 KiB reads), MB/s" "$(mbps "$(med "$dir/read.times")" $gib)" "-" "-" "-"
r=$(ratio "$s2" "$s1f"); row "seal 1 GiB -j 2 vs -j 1 (>= 1.7x), MB/s" "$s2" "$s1f" "${r}x" "$(verdict "$r" ">=" 1.7)"
r=$(ratio "$o2" "$o1f"); row "open 1 GiB -j 2 vs -j 1 (>= 1.7x), MB/s" "$o2" "$o1f" "${r}x" "$(verdict "$r" ">=" 1.7)"
row "1 MiB at the end of 4 GiB (<= 20 ms), ms; peer: age" "$rms" "$ams" "-" "$(verdict "$rms" "<=" 20)"
row "peak RSS, seal 4 GiB -j $workers (<= $rss_limit_kib KiB), KiB" "$srss" "-" "-" "$(verdict "$srss" "<=" "$rss_limit_kib")"
row "peak RSS, open 4 GiB -j $workers (<= $rss_limit_kib KiB), KiB" "$orss" "-" "-" "$(verdict "$orss" "<=" "$rss_limit_kib")"
