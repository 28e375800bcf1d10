#!/usr/bin/env bash
# make bench-pipe: spipe beside raw TCP, a plaintext relay pair of the same
# shape (spipe's forwarding engine with encryption off), spiped and ssh -L,
# all on loopback in one run. For each system: bulk throughput of SIZE
# bytes over one connection, RTT_N round trips of 64 bytes with everything
# pinned to one CPU (p50, p99), and CPS_N connections (connect, 1-byte
# echo, close; CPS_P at a time). Before each measurement it waits (up to
# QUIET_TIMEOUT s) for the machine to be less than QUIET_BUSY % busy, and
# it repeats everything REPS times, round-robin over the systems, printing
# medians and the ratios the hardening issue and issue 18 set as targets.
# Beside each bulk and connections/s figure it records the CPU time the
# system's own processes used (not the shared target's or the load
# generator's), per GiB and per connection: on a 2-vCPU machine where
# every process of the chain competes for the same cores, that is what
# bounds the wall-clock ratios, and it varies far less with background
# load. Variants that differ only in their handshake (spipe --no-pfs,
# spiped -f) are measured for connections/s only: bulk and round trips run
# the same code. Last, one more bulk run of PROFILE_SIZE bytes through each
# spipe pair runs under `perf record -e cpu-clock` (PROFILE=0 skips it), and
# the table gives the share of each spipe process's CPU spent in the AEAD
# (the ChaCha, Salsa20 and Poly1305 kernels and pkg/aead); perf's own cost
# stays out of the measured runs.
#
# The multiplexed mode (spipe connect --mux, issues 17 and 22) is measured
# beside them on loopback, and two more columns compare new connections
# and streams: "ttfb", the time from a new connection's connect to its
# first echoed byte through a link of DELAY_MS each way
# (internal/delayproxy, which also models TCP's handshake), median of
# connections 2..TTFB_N, for raw TCP, spiped, ssh -L, spipe and spipe
# --mux; and "fair", how much a 64-byte round trip slows while another
# connection (for --mux, another stream of the same carrier) pushes bulk
# data at full speed (loaded p50 over idle p50, FAIR_N round trips each,
# not pinned). Two more measurements run once, after the rest: "restart",
# how soon connect --mux serves a new connection once a listener
# restarted (SIGTERM, a new one on the port RESTART_GAP later) with a
# stream open is up, median and worst of RESTART_N restarts; and
# "memory", how much a listener whose target never reads grows while a
# key holder sends 100 streams nothing but 1-byte frames (SMALL_FRAMES a
# stream at most, as credit allows), against the bound docs/PROTOCOL.md
# 7.8 states.
#
# Needs spiped (Debian: spiped), sshd and ssh (openssh-server), taskset;
# perf (Debian: linux-perf) for the AEAD shares. Not part of `make test`.
set -euo pipefail
cd "$(dirname "$0")/.."

GO=${GO:-go}
SIZE=${SIZE:-2147483648}
RTT_N=${RTT_N:-10000}
CPS_N=${CPS_N:-2000}
CPS_P=${CPS_P:-4}
REPS=${REPS:-3}
DELAY_MS=${DELAY_MS:-25}
TTFB_N=${TTFB_N:-11}
FAIR_N=${FAIR_N:-2000}
RESTART_N=${RESTART_N:-5}
RESTART_GAP=${RESTART_GAP:-300ms}
SMALL_FRAMES=${SMALL_FRAMES:-16128}
QUIET_BUSY=${QUIET_BUSY:-30}
QUIET_TIMEOUT=${QUIET_TIMEOUT:-15}
SUITES=${SUITES:-chacha20-poly1305 xsalsa20-poly1305 chacha12-poly1305 chacha8-poly1305 xsalsa12-poly1305}
PROFILE=${PROFILE:-1}
PROFILE_SIZE=${PROFILE_SIZE:-1073741824}
SSHD=${SSHD:-$(command -v sshd || echo /usr/sbin/sshd)}
PIN_CPU=${PIN_CPU:-0}
ALL_CPUS=$(taskset -pc $$ | sed 's/.*: //')

for tool in spiped "$SSHD" ssh ssh-keygen taskset; do
  command -v "$tool" >/dev/null || { echo "bench-pipe needs $tool (apt-get install spiped openssh-server util-linux)" >&2; exit 1; }
done

work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

echo "== building"
$GO build -o "$work/spipe" ./cmd/spipe
$GO build -o "$work/benchpipe" ./internal/benchpipe
bp=$work/benchpipe
port() { "$bp" port; }
bg() { # bg NAME CMD...: start in the background, log to $work/NAME.log
  local name=$1; shift
  "$@" >"$work/$name.log" 2>&1 &
  pids+=($!)
  eval "pid_$name=$!"
}

# --- the far end and the systems (all started once, idle until measured)
tport=$(port)
bg target "$bp" target -l "127.0.0.1:$tport"
"$bp" wait -c "127.0.0.1:$tport"

declare -A entry procs own label metrics spipe_pids
systems=()
add() { # add ID LABEL ENTRYPORT PIDS...; METRICS (env) narrows what is measured
  local id=$1 lbl=$2 p=$3; shift 3
  systems+=("$id"); label[$id]=$lbl; entry[$id]=127.0.0.1:$p; procs[$id]="$*"
  local q; own[$id]=""
  for q in "$@"; do [ "$q" = "$pid_target" ] || own[$id]+=" $q"; done
  metrics[$id]=${METRICS:-bulk rtt cps}
}
# delayed NAME FARPORT: start a delay proxy in front of the far end at
# FARPORT; its port is left in $dl (no subshell: bg must record the pid).
delayed() {
  dl=$(port)
  bg "delay_$1" "$bp" delay -l "127.0.0.1:$dl" -t "127.0.0.1:$2" -d "${DELAY_MS}ms"
  "$bp" wait -c "127.0.0.1:$dl"
}
declare -A ttfb_entry
add raw "raw TCP" "$tport" "$pid_target"
delayed raw "$tport"; ttfb_entry[raw]=127.0.0.1:$dl

r2=$(port); r1=$(port)
bg relay2 "$bp" relay -l "127.0.0.1:$r2" -t "127.0.0.1:$tport"
bg relay1 "$bp" relay -l "127.0.0.1:$r1" -t "127.0.0.1:$r2"
add relay "relay pair (plaintext)" "$r1" "$pid_target $pid_relay1 $pid_relay2"
# The same pair copying 1 MiB at a time, as spipe's frames carry: what the
# engine costs without encryption when it moves data in spipe's pieces
# (bulk only; no target is set against it, it keeps the excess honest).
r4=$(port); r3=$(port)
bg relay4 "$bp" relay -buf 1048576 -l "127.0.0.1:$r4" -t "127.0.0.1:$tport"
bg relay3 "$bp" relay -buf 1048576 -l "127.0.0.1:$r3" -t "127.0.0.1:$r4"
METRICS=bulk add relay1m "relay pair, 1 MiB copies" "$r3" "$pid_target $pid_relay3 $pid_relay4"

"$work/spipe" keygen "$work/key" >/dev/null
n=0
for suite in $SUITES; do
  for pfs in on off; do
    n=$((n + 1))
    flags=(--cipher "$suite" --max-conns 1000 --log-level error)
    [ $pfs = off ] && flags+=(--no-pfs)
    lp=$(port); cp=$(port)
    bg "spl$n" "$work/spipe" listen -s "127.0.0.1:$lp" -t "127.0.0.1:$tport" -k "$work/key" "${flags[@]}"
    bg "spc$n" "$work/spipe" connect -s "127.0.0.1:$cp" -t "127.0.0.1:$lp" -k "$work/key" "${flags[@]}"
    m="bulk rtt cps"; [ $pfs = off ] && m=cps
    eval "METRICS=\"$m\" add spipe$n \"spipe $suite pfs=$pfs\" $cp \"\$pid_target \$pid_spl$n \$pid_spc$n\""
    eval "spipe_pids[spipe$n]=\"\$pid_spc$n \$pid_spl$n\""
    [ "$suite" = chacha20-poly1305 ] && [ $pfs = on ] && { spipe_default=spipe$n; spipe_lport=$lp; spipe_flags=("${flags[@]}"); eval "spipe_lpid=\$pid_spl$n"; }
    [ "$suite" = chacha20-poly1305 ] && [ $pfs = off ] && spipe_nopfs=spipe$n
  done
done
# spipe --mux into the default listener: every connection a stream of one
# carrier opened at start-up.
mp=$(port)
bg spm "$work/spipe" connect --mux -s "127.0.0.1:$mp" -t "127.0.0.1:$spipe_lport" -k "$work/key" "${spipe_flags[@]}"
METRICS="bulk rtt cps fair" add spipemux "spipe --mux chacha20-poly1305" "$mp" "$pid_target $spipe_lpid $pid_spm"
spipe_pids[spipemux]="$pid_spm $spipe_lpid"
metrics[$spipe_default]+=" fair"
# With two carriers the pool puts the bulk stream and the interactive one
# on different carriers: the fairness lever --mux-carriers gives.
mp=$(port)
bg spm2 "$work/spipe" connect --mux --mux-carriers 2 -s "127.0.0.1:$mp" -t "127.0.0.1:$spipe_lport" -k "$work/key" "${spipe_flags[@]}"
METRICS="fair" add spipemux2 "spipe --mux --mux-carriers 2" "$mp" "$pid_target $spipe_lpid $pid_spm2"
# The same two through the delayed link, for the ttfb column.
delayed spipe "$spipe_lport"
cp=$(port); bg spcd "$work/spipe" connect -s "127.0.0.1:$cp" -t "127.0.0.1:$dl" -k "$work/key" "${spipe_flags[@]}"
ttfb_entry[$spipe_default]=127.0.0.1:$cp
cp=$(port); bg spmd "$work/spipe" connect --mux -s "127.0.0.1:$cp" -t "127.0.0.1:$dl" -k "$work/key" "${spipe_flags[@]}"
ttfb_entry[spipemux]=127.0.0.1:$cp

head -c 32 /dev/urandom >"$work/spiped.key"
for fast in "" "-f"; do
  dp=$(port); ep=$(port); id=spiped${fast:+f}
  bg "${id}d" spiped -F -d -s "[127.0.0.1]:$dp" -t "[127.0.0.1]:$tport" -k "$work/spiped.key" -n 1000 $fast
  bg "${id}e" spiped -F -e -s "[127.0.0.1]:$ep" -t "[127.0.0.1]:$dp" -k "$work/spiped.key" -n 1000 $fast
  m="bulk rtt cps"; [ -n "$fast" ] && m=cps
  eval "METRICS=\"$m\" add $id \"spiped ${fast:-(DH)}\" $ep \"\$pid_target \$pid_${id}d \$pid_${id}e\""
  if [ -z "$fast" ]; then
    delayed spiped "$dp"; ep=$(port)
    bg spipedttfb spiped -F -e -s "[127.0.0.1]:$ep" -t "[127.0.0.1]:$dl" -k "$work/spiped.key" -n 1000
    ttfb_entry[spiped]=127.0.0.1:$ep
  fi
done

sshd_port=$(port)
source scripts/lib/sshd.sh
private_sshd_config "$work" "$sshd_port" "AllowTcpForwarding yes" "MaxSessions 1000"
bg sshd "$SSHD" -D -e -f "$work/sshd_config"
"$bp" wait -c "127.0.0.1:$sshd_port"
for cipher in chacha20-poly1305@openssh.com aes128-gcm@openssh.com; do
  lp=$(port); id=ssh_${cipher%%-*}
  bg "$id" ssh -F /dev/null -N -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null \
    -o ExitOnForwardFailure=yes -o Compression=no -c "$cipher" -i "$work/user_key" -p "$sshd_port" \
    -L "127.0.0.1:$lp:127.0.0.1:$tport" "$(id -un)@127.0.0.1"
  eval "add $id \"ssh -L ${cipher%%@*}\" $lp \"\$pid_target \$pid_sshd \$pid_$id\""
done
# ssh -L through the delayed link: its channels ride one SSH connection,
# opened here, before anything is measured.
delayed ssh "$sshd_port"; lp=$(port)
bg sshttfb ssh -F /dev/null -N -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null \
  -o ExitOnForwardFailure=yes -o Compression=no -c chacha20-poly1305@openssh.com -i "$work/user_key" -p "$dl" \
  -L "127.0.0.1:$lp:127.0.0.1:$tport" "$(id -un)@127.0.0.1"
ttfb_entry[ssh_chacha20]=127.0.0.1:$lp
for id in "${!ttfb_entry[@]}"; do metrics[$id]+=" ttfb"; done

for id in "${systems[@]}"; do
  "$bp" wait -c "${entry[$id]}" || { echo "${label[$id]} did not start:"; tail -5 "$work"/*.log; exit 1; }
done
for id in "${!ttfb_entry[@]}"; do
  "$bp" wait -c "${ttfb_entry[$id]}" || { echo "${label[$id]} through the delayed link did not start:"; tail -5 "$work"/*.log; exit 1; }
done

# --- measuring
# busy prints how busy (percent, all CPUs) the machine was over 1 s.
busy() {
  local a b
  a=($(head -1 /proc/stat)); sleep 1; b=($(head -1 /proc/stat))
  local idle=$(( (b[4] + b[5]) - (a[4] + a[5]) )) total=0 i
  for i in 1 2 3 4 5 6 7 8; do total=$(( total + b[i] - a[i] )); done
  echo $(( total > 0 ? 100 - 100 * idle / total : 0 ))
}
# quiet waits for a quiet machine (or gives up after QUIET_TIMEOUT s) and
# records what it saw.
quiet() {
  local start=$SECONDS b
  while :; do
    b=$(busy)
    if [ "$b" -lt "$QUIET_BUSY" ] || [ $((SECONDS - start)) -ge "$QUIET_TIMEOUT" ]; then break; fi
  done
  echo "$b $(cut -d' ' -f1 /proc/loadavg)" >>"$work/quiet"
}
# tree lists a process and its descendants (sshd forks per connection).
tree() {
  local p
  for p in "$@"; do
    echo "$p"
    tree $(ps -o pid= --ppid "$p" 2>/dev/null) 
  done
}
pin() { # pin CPUS PIDS...: move every thread of the processes
  local cpus=$1 p; shift
  for p in $(tree "$@"); do taskset -apc "$cpus" "$p" >/dev/null 2>&1 || true; done
}
record() { echo "$1 $2 $3" >>"$work/results"; }
# cpu_ticks ID: CPU clock ticks used so far by the system's own processes
# and their descendants (sshd's session child), reaped children included.
tick_hz=$(getconf CLK_TCK)
cpu_ticks() {
  local p t=0 v
  for p in $(tree ${own[$1]}); do
    v=$(sed 's/.*) //' "/proc/$p/stat" 2>/dev/null | awk '{ print $12 + $13 + $14 + $15 }') || continue
    t=$((t + ${v:-0}))
  done
  echo "$t"
}
# record_cpu ID METRIC TICKS UNITS SCALE: CPU seconds per unit, times SCALE.
record_cpu() { record "$1" "$2" "$(awk -v t="$3" -v hz="$tick_hz" -v u="$4" -v k="$5" 'BEGIN { printf "%.3f", t / hz / u * k }')"; }
value() { sed -n "s/.*$1=\([0-9.]*\).*/\1/p"; }

run() { # run ID METRIC
  local id=$1 metric=$2 out t0
  quiet
  t0=$(cpu_ticks "$id")
  case $metric in
  bulk)
    out=$("$bp" bulk -c "${entry[$id]}" -n "$SIZE") || { echo "  ${label[$id]} bulk failed" >&2; return; }
    [ -n "${own[$id]}" ] && record_cpu "$id" cpub $(($(cpu_ticks "$id") - t0)) "$SIZE" 1073741824
    record "$id" bulk "$(echo "$out" | value mbps)" ;;
  rtt)
    pin "$PIN_CPU" ${procs[$id]}
    out=$(taskset -c "$PIN_CPU" "$bp" rtt -c "${entry[$id]}" -n "$RTT_N" -size 64) || { echo "  ${label[$id]} rtt failed" >&2; pin "$ALL_CPUS" ${procs[$id]}; return; }
    pin "$ALL_CPUS" ${procs[$id]}
    record "$id" p50 "$(echo "$out" | value p50_us)"
    record "$id" p99 "$(echo "$out" | value p99_us)" ;;
  cps)
    out=$("$bp" cps -c "${entry[$id]}" -n "$CPS_N" -p "$CPS_P") || { echo "  ${label[$id]} cps failed" >&2; return; }
    [ -n "${own[$id]}" ] && record_cpu "$id" cpuc $(($(cpu_ticks "$id") - t0)) "$CPS_N" 1e6
    record "$id" cps "$(echo "$out" | value cps)" ;;
  ttfb)
    out=$("$bp" ttfb -c "${ttfb_entry[$id]}" -n "$TTFB_N") || { echo "  ${label[$id]} ttfb failed" >&2; return; }
    record "$id" ttfb "$(echo "$out" | value ttfb_ms)" ;;
  fair)
    out=$("$bp" fair -c "${entry[$id]}" -n "$FAIR_N" -size 64) || { echo "  ${label[$id]} fair failed" >&2; return; }
    record "$id" fair "$(echo "$out" | value ratio)"
    record "$id" fairidle "$(echo "$out" | value idle_p50_us)"
    record "$id" fairload "$(echo "$out" | value loaded_p50_us)" ;;
  esac
  echo "  rep $rep ${label[$id]} $metric: $(echo "$out" | tr '\n' ' ')(busy $(tail -1 "$work/quiet" | cut -d' ' -f1)%)"
}

echo "== measuring: ${#systems[@]} systems x (bulk $SIZE B, rtt $RTT_N x 64 B on CPU $PIN_CPU, cps $CPS_N x $CPS_P," \
  "ttfb $TTFB_N connections over ${DELAY_MS} ms each way, fair $FAIR_N x 64 B beside bulk) x $REPS reps"
for rep in $(seq 1 "$REPS"); do
  for id in "${systems[@]}"; do
    for metric in ${metrics[$id]}; do run "$id" "$metric"; done
  done
done

median() { # median ID METRIC
  awk -v id="$1" -v m="$2" '$1 == id && $2 == m { print $3 }' "$work/results" | sort -g |
    awk '{ v[NR] = $1 } END { if (NR == 0) print "-"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# --- where a spipe pair's CPU goes: one more bulk run under perf
# aead_share PERFDATA: the percentage of the samples in the AEAD's code,
# and the number of samples.
aead_share() {
  perf report -i "$1" --no-children --sort sym --stdio -g none 2>/dev/null | awk '
    /^# Samples:/ { samples = $3 }
    /%/ && $3 ~ /spipe\/(internal\/(chachacore|salsacore|poly1305)|pkg\/aead)\./ { sub("%", "", $1); share += $1 }
    END { printf "%.1f %s", share, samples }'
}
# profile ID: records the share of each of the pair's processes
# (connect, then listen) as metrics aead_c and aead_l.
profile() {
  local id=$1 p i=0 perfpids=() m
  for p in ${spipe_pids[$id]}; do
    i=$((i + 1))
    perf record -q -e cpu-clock -F 999 -o "$work/perf.$id.$i" -p "$p" >/dev/null 2>&1 &
    perfpids+=($!)
  done
  sleep 0.5
  "$bp" bulk -c "${entry[$id]}" -n "$PROFILE_SIZE" >/dev/null || echo "  ${label[$id]} profiled bulk failed" >&2
  kill -INT "${perfpids[@]}" 2>/dev/null; wait "${perfpids[@]}" 2>/dev/null || true
  i=0
  for m in aead_c aead_l; do
    i=$((i + 1))
    [ -s "$work/perf.$id.$i" ] && record "$id" "$m" "$(aead_share "$work/perf.$id.$i" | cut -d' ' -f1)"
  done
  echo "  ${label[$id]} profiled: AEAD share connect $(median "$id" aead_c)% listen $(median "$id" aead_l)%"
}
if [ "$PROFILE" = 1 ]; then
  if command -v perf >/dev/null && perf record -q -e cpu-clock -o "$work/perf.check" -- true >/dev/null 2>&1; then
    echo "== profiling one bulk run of $PROFILE_SIZE B per spipe pair (perf record -e cpu-clock)"
    for id in "${systems[@]}"; do
      if [ -n "${spipe_pids[$id]:-}" ] && [[ " ${metrics[$id]} " == *" bulk "* ]]; then quiet; profile "$id"; fi
    done
  else
    echo "== no AEAD shares: perf is missing or may not profile here (Debian: linux-perf; kernel.perf_event_paranoid)"
  fi
fi

# --- once each: a restart under connect --mux, and a key holder's small frames
quiet
echo "== restart: $RESTART_N listener restarts under connect --mux with a stream open ($RESTART_GAP from SIGTERM to the new listener)"
restart_out=$("$bp" restart -spipe "$work/spipe" -t "127.0.0.1:$tport" -n "$RESTART_N" -gap "$RESTART_GAP") ||
  { echo "  restart failed" >&2; restart_out=""; }
echo "  $restart_out"
sp=$(port); bg silent "$bp" silent -l "127.0.0.1:$sp"
"$bp" wait -c "127.0.0.1:$sp"
mlp=$(port); bg spmem "$work/spipe" listen -s "127.0.0.1:$mlp" -t "127.0.0.1:$sp" -k "$work/key" --max-conns 1000 --log-level error
"$bp" wait -c "127.0.0.1:$mlp"
quiet
echo "== memory: 100 streams of 1-byte frames (up to $SMALL_FRAMES a stream) into a listener whose target never reads"
mem_out=$("$bp" smallframes -c "127.0.0.1:$mlp" -k "$work/key" -pid "$pid_spmem" -streams 100 -n "$SMALL_FRAMES") ||
  { echo "  memory measurement failed" >&2; mem_out=""; }
echo "  $mem_out"

# --- the table
echo
echo "== medians of $REPS (bulk MB/s; round trip µs, pinned to one CPU; connections/s)"
printf "%-36s %10s %10s %10s %10s %10s %10s %10s %8s\n" system "bulk MB/s" "rtt p50" "rtt p99" "conn/s" "CPU s/GiB" "CPU us/c" "ttfb ms" "fair x"
for id in "${systems[@]}"; do
  printf "%-36s %10s %10s %10s %10s %10s %10s %10s %8s\n" "${label[$id]}" "$(median "$id" bulk)" "$(median "$id" p50)" \
    "$(median "$id" p99)" "$(median "$id" cps)" "$(median "$id" cpub)" "$(median "$id" cpuc)" "$(median "$id" ttfb)" "$(median "$id" fair)"
done
echo "(CPU s/GiB and us/c: CPU time of the system's own processes per GiB of bulk and per connection, target and load generator excluded)"
echo "(ttfb ms: a new connection's connect to its first echoed byte through a link of $((2 * DELAY_MS)) ms round trip, median of connections 2..$TTFB_N;"
echo " fair x: a 64-byte round trip's p50 while another connection (--mux: another stream of its carrier) pushes bulk, over its idle p50)"
if [ "$PROFILE" = 1 ] && grep -q " aead_" "$work/results" 2>/dev/null; then
  echo
  echo "== the AEAD's share of each spipe process's CPU in a bulk run (perf cpu-clock samples in the ChaCha/Salsa20/Poly1305 kernels and pkg/aead)"
  printf "%-36s %10s %10s\n" system "connect" "listen"
  for id in "${systems[@]}"; do
    [ "$(median "$id" aead_c)" = - ] && continue
    printf "%-36s %9s%% %9s%%\n" "${label[$id]}" "$(median "$id" aead_c)" "$(median "$id" aead_l)"
  done
  echo "(the share of all of the process's samples, kernel time included; perf's own cost makes a profiled run a little dearer, so no CPU time is taken from it)"
fi
echo
echo "== ratios (spipe = chacha20-poly1305; targets from the hardening issue)"
# verdict VALUE OP TARGET: meets or SHORT.
verdict() { awk -v r="$1" -v t="$3" -v op="$2" 'BEGIN { ok = (op == ">=") ? r >= t : r <= t; print ok ? "meets" : "SHORT" }'; }
ratio() { # ratio TEXT A_ID A_METRIC B_ID B_METRIC OP TARGET
  local a b r
  a=$(median "$2" "$3"); b=$(median "$4" "$5")
  if [ "$a" = - ] || [ "$b" = - ]; then printf "%-52s %8s\n" "$1" "n/a"; return; fi
  r=$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f", a / b }')
  printf "%-52s %8sx   target %s %sx   %s\n" "$1" "$r" "$6" "$7" "$(verdict "$r" "$6" "$7")"
}
ratio "bulk: spipe / relay pair" "$spipe_default" bulk relay bulk ">=" 0.75
ratio "bulk: spipe / spiped" "$spipe_default" bulk spiped bulk ">=" 4
ratio "bulk: spipe / ssh -L aes128-gcm" "$spipe_default" bulk ssh_aes128 bulk ">=" 1.1
ratio "rtt p50: spipe / relay pair" "$spipe_default" p50 relay p50 "<=" 1.2
ratio "conn/s with forward secrecy: spipe / spiped (DH)" "$spipe_default" cps spiped cps ">=" 3
ratio "conn/s without: spipe --no-pfs / spiped -f" "$spipe_nopfs" cps spipedf cps ">=" 1.0
echo
echo "== issue 18 targets (the pipe's crypto at kernel speed; spipe = chacha20-poly1305)"
excess() { # excess TEXT A_ID B_ID METRIC [TARGET]: A - B against an upper bound, if given
  local a b d
  a=$(median "$2" "$4"); b=$(median "$3" "$4")
  if [ "$a" = - ] || [ "$b" = - ]; then printf "%-52s %8s\n" "$1" "n/a"; return; fi
  d=$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f", a - b }')
  if [ -z "${5:-}" ]; then
    printf "%-52s %8s    (no target; %s against %s)\n" "$1" "$d" "$a" "$b"
    return
  fi
  printf "%-52s %8s    target <= %s   %s   (%s against %s)\n" "$1" "$d" "$5" "$(verdict "$d" "<=" "$5")" "$a" "$b"
}
ratio "CPU s/GiB: spipe / ssh -L aes128-gcm" "$spipe_default" cpub ssh_aes128 cpub "<=" 1.0
excess "CPU s/GiB: spipe - relay pair" "$spipe_default" relay cpub 0.5
# The same pair copying 1 MiB at a time, as spipe's frames do.
excess "CPU s/GiB: spipe - relay pair, 1 MiB copies" "$spipe_default" relay1m cpub
ratio "bulk: spipe / ssh -L aes128-gcm" "$spipe_default" bulk ssh_aes128 bulk ">=" 1.05
ratio "rtt p50 (one CPU): spipe / relay pair" "$spipe_default" p50 relay p50 "<=" 1.15
echo
echo "== the multiplexed mode (targets from issue 22; spipe --mux = chacha20-poly1305 with forward secrecy)"
rtt_ms=$((2 * DELAY_MS))
for id in raw spiped ssh_chacha20 "$spipe_default" spipemux; do
  v=$(median "$id" ttfb)
  [ "$v" = - ] && { printf "%-52s %8s\n" "ttfb over $rtt_ms ms RTT: ${label[$id]}" "n/a"; continue; }
  printf "%-52s %8s RTT  (%s ms)\n" "ttfb over $rtt_ms ms RTT: ${label[$id]}" "$(awk -v v="$v" -v r="$rtt_ms" 'BEGIN { printf "%.2f", v / r }')" "$v"
done
v=$(median spipemux ttfb)
if [ "$v" != - ]; then
  r=$(awk -v v="$v" -v t="$rtt_ms" 'BEGIN { printf "%.2f", v / t }')
  printf "%-52s %8sx   target <= 1.3x   %s\n" "ttfb: spipe --mux / RTT" "$r" "$(verdict "$r" "<=" 1.3)"
fi
a=$(median spipemux cps); b1=$(median spipedf cps); b2=$(median ssh_chacha20 cps); b3=$(median ssh_aes128 cps)
best=$(printf "%s\n%s\n%s\n" "$b1" "$b2" "$b3" | grep -v '^-$' | sort -g | tail -1)
if [ "$a" != - ] && [ -n "$best" ]; then
  r=$(awk -v a="$a" -v b="$best" 'BEGIN { printf "%.2f", a / b }')
  printf "%-52s %8sx   target >= 1.1x   %s   (%s against %s)\n" "conn/s: spipe --mux / best of spiped -f, ssh -L" "$r" "$(verdict "$r" ">=" 1.1)" "$a" "$best"
fi
ratio "bulk: spipe --mux (one stream) / spipe" spipemux bulk "$spipe_default" bulk ">=" 0.9
ratio "rtt p50 (one CPU): spipe --mux / spipe" spipemux p50 "$spipe_default" p50 "<=" 1.1
v=$(median spipemux fair)
if [ "$v" != - ]; then
  printf "%-52s %8sx   target <= 3x     %s   (p50 %s us loaded, %s us idle; plain spipe, two connections: %sx)\n" \
    "fairness: --mux round trip beside a bulk stream" "$v" "$(verdict "$v" "<=" 3)" \
    "$(median spipemux fairload)" "$(median spipemux fairidle)" "$(median "$spipe_default" fair)"
fi
v=$(median spipemux2 fair)
[ "$v" != - ] && printf "%-52s %8sx   (no target: the two streams ride different carriers)\n" "fairness: --mux --mux-carriers 2" "$v"
v=$(echo "$restart_out" | value max_ms)
if [ -n "$v" ]; then
  printf "%-52s %8s ms  target <= 1000 ms   %s   (median %s ms of %s)\n" "restart: served after the new listener is up (worst)" "$v" \
    "$(verdict "$v" "<=" 1000)" "$(echo "$restart_out" | value served_ms)" "$RESTART_N"
else
  printf "%-52s %8s\n" "restart: served after the new listener is up" "n/a"
fi
v=$(echo "$mem_out" | value growth_kib); b=$(echo "$mem_out" | value bound_kib)
if [ -n "$v" ] && [ -n "$b" ]; then
  printf "%-52s %8s KiB target <= %s KiB   %s   (%s frames)\n" "memory: listener growth, 100 streams of 1-byte frames" "$v" "$b" \
    "$(verdict "$v" "<=" "$b")" "$(echo "$mem_out" | value frames)"
else
  printf "%-52s %8s\n" "memory: listener growth, 100 streams of 1-byte frames" "n/a"
fi
echo
echo "== CPU cost ratios (no targets; they explain the wall-clock ones)"
cost() { # cost TEXT A_ID B_ID METRIC
  local a b
  a=$(median "$2" "$4"); b=$(median "$3" "$4")
  if [ "$a" = - ] || [ "$b" = - ]; then printf "%-52s %8s\n" "$1" "n/a"; return; fi
  printf "%-52s %8sx   (%s against %s)\n" "$1" "$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f", a / b }')" "$a" "$b"
}
cost "CPU per GiB: spipe / relay pair" "$spipe_default" relay cpub
cost "CPU per GiB: spipe / relay pair, 1 MiB copies" "$spipe_default" relay1m cpub
cost "CPU per GiB: spipe / spiped" "$spipe_default" spiped cpub
cost "CPU per connection: spipe / spiped (DH)" "$spipe_default" spiped cpuc
cost "CPU per connection: spipe --no-pfs / spiped -f" "$spipe_nopfs" spipedf cpuc
cost "CPU per connection: spipe --no-pfs / relay pair" "$spipe_nopfs" relay cpuc
echo
mid() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
echo "machine:$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2), $(nproc) CPUs"
printf "machine before each measurement: busy median %s%% (max %s%%), 1-min load median %s (QUIET_BUSY=%s%%, QUIET_TIMEOUT=%ss)\n" \
  "$(cut -d' ' -f1 "$work/quiet" | mid)" "$(cut -d' ' -f1 "$work/quiet" | sort -g | tail -1)" \
  "$(cut -d' ' -f2 "$work/quiet" | mid)" "$QUIET_BUSY" "$QUIET_TIMEOUT"
