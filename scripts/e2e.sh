#!/usr/bin/env bash
# make e2e: spipe against programs nobody here wrote, on loopback only.
#   1. a real sshd (private config, throwaway host and user keys) reached
#      with ssh -o ProxyCommand='spipe connect ...' through a spipe listen,
#      running commands and moving 20 MB through the session;
#   2. curl fetching a 100 MB file from python3 -m http.server through a
#      spipe connect / spipe listen pair, checksum compared;
#   3. the same through spipe connect --mux, four fetches at once, each a
#      stream of the one connection to the listener, and ssh through the
#      multiplexed ProxyCommand;
#   4. real clients whose traffic must not read as failures: pgbench
#      (libpq's default sslmode=prefer) against a PostgreSQL cluster with
#      ssl=on, with -c 20 and with -C (a connection per transaction), and
#      redis-benchmark against redis-server, each through a plain and a
#      multiplexed tunnel: every run passes, the tunnel logs nothing at
#      WARN or above, its failure series stay at zero and its ends add up
#      to its connections; then pgbench with -c above --max-conns ends
#      (the clients beyond it reset after --max-conns-wait, counted as
#      reason="limit") instead of hanging.
#   5. HAProxy with contrib/haproxy/haproxy.cfg in front of two spipe
#      listen (internal/lbtest, run here with this script's spipe):
#      connections spread, the target learns the client's own address, a
#      flood from one address leaves another's echoes within 3 s (with and
#      without --accept-proxy-from, figures printed), and a listener
#      stopped with SIGTERM loses nothing once its /healthz said 503.
#   6. a directory through tar c | spipe seal and spipe open | tar x, the
#      archive opened from stdin to -o and listed by tar, a range read, and
#      a damaged archive refused (exit 13) with no -o output left.
# Needs sshd (openssh-server), ssh, curl, python3, PostgreSQL's server and
# pgbench (postgresql), openssl, redis-server and redis-benchmark
# (redis-tools), haproxy and tar. Everything started here is stopped on exit.
set -euo pipefail
cd "$(dirname "$0")/.."

GO=${GO:-go}
BIN=${BIN:-bin/spipe}
SSHD=${SSHD:-$(command -v sshd || echo /usr/sbin/sshd)}
HAPROXY=${HAPROXY:-$(command -v haproxy || echo /usr/sbin/haproxy)}

for tool in "$SSHD" ssh ssh-keygen curl python3 sha256sum "$HAPROXY"; do
  command -v "$tool" >/dev/null || { echo "e2e: $tool not found (make e2e-tools installs it)" >&2; exit 1; }
done

work=$(mktemp -d "${TMPDIR:-/tmp}/spipe-e2e.XXXXXX")
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
fail() {
  echo "e2e FAILED: $*" >&2
  for f in "$work"/*.log; do echo "--- $f" >&2; cat "$f" >&2; done
  exit 1
}

echo "== building $BIN"
mkdir -p "$(dirname "$BIN")"
$GO build -o "$BIN" ./cmd/spipe
$GO build -o "$work/pipecheck" ./internal/tools/pipecheck
BIN=$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")
check="$work/pipecheck"
port() { "$check" freeport; }
"$BIN" keygen "$work/key" >/dev/null

# --- 1. sshd through spipe ------------------------------------------------
echo "== sshd through spipe"
sshd_port=$(port)
source scripts/lib/sshd.sh
private_sshd_config "$work" "$sshd_port"
"$SSHD" -D -e -f "$work/sshd_config" 2>"$work/sshd.log" & pids+=($!)
lsn_ssh=$(port)
"$BIN" listen -s "127.0.0.1:$lsn_ssh" -t "127.0.0.1:$sshd_port" -k "$work/key" 2>"$work/listen-ssh.log" & pids+=($!)
"$check" wait -c "127.0.0.1:$sshd_port" || fail "sshd did not start"
"$check" wait -c "127.0.0.1:$lsn_ssh" || fail "spipe listen did not start"

# The ProxyCommand logs at the default level, as a user's would: in stdio
# mode it must stay silent, SIGHUP from ssh on exit included. $mux adds
# --mux to the ProxyCommand.
mux=""
ssh_run() {
  ssh -F /dev/null -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null \
    -o LogLevel=ERROR -o ConnectTimeout=20 -i "$work/user_key" \
    -o ProxyCommand="$BIN connect $mux -t [%h]:$lsn_ssh -k $work/key" \
    "$(id -un)@127.0.0.1" "$@" 2>>"$work/ssh.log"
}
out=$(ssh_run 'echo hello from sshd; echo "user=$(id -un)"') || fail "ssh through spipe"
[ "$(echo "$out" | head -1)" = "hello from sshd" ] || fail "ssh output: $out"
echo "   ssh ran a command: $(echo "$out" | tr '\n' ' ')"
head -c 20000000 /dev/urandom >"$work/upload.bin"
want=$(sha256sum <"$work/upload.bin" | cut -d' ' -f1)
got=$(ssh_run 'sha256sum' <"$work/upload.bin" | cut -d' ' -f1) || fail "ssh upload"
[ "$got" = "$want" ] || fail "20 MB through ssh: sha256 $got, want $want"
echo "   20 MB through the ssh session: sha256 matches"
[ ! -s "$work/ssh.log" ] || fail "the ProxyCommand wrote to the terminal: $(cat "$work/ssh.log")"
echo "   spipe connect as ProxyCommand ([%h]) said nothing on the terminal"
"$BIN" keygen "$work/wrong-key" >/dev/null
if ssh -F /dev/null -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null \
    -o LogLevel=ERROR -o ConnectTimeout=20 -i "$work/user_key" \
    -o ProxyCommand="$BIN connect -t 127.0.0.1:$lsn_ssh -k $work/wrong-key" \
    "$(id -un)@spipe-e2e" true 2>>"$work/ssh-wrong-key.log"; then
  fail "ssh got through spipe with the wrong key"
fi
grep -q 'stage=handshake reason=auth' "$work/listen-ssh.log" || fail "spipe listen did not log the wrong key"
[ "$(grep -c '^spipe: .*server closed the connection during the handshake (wrong key or context' "$work/ssh-wrong-key.log")" = 1 ] ||
  fail "the refused ProxyCommand did not say why in one line: $(cat "$work/ssh-wrong-key.log")"
echo "   ssh with the wrong spipe key is refused at the spipe handshake; the user sees one line with the likely causes"

# --- 2. curl through spipe ------------------------------------------------
echo "== curl through spipe connect/listen from python3 -m http.server"
mkdir -p "$work/www"
head -c 100000000 /dev/urandom >"$work/www/big.bin"
want=$(sha256sum <"$work/www/big.bin" | cut -d' ' -f1)
http_port=$(port)
python3 -m http.server --bind 127.0.0.1 --directory "$work/www" "$http_port" >"$work/http.log" 2>&1 & pids+=($!)
lsn_http=$(port)
con_http=$(port)
"$BIN" listen -s "127.0.0.1:$lsn_http" -t "127.0.0.1:$http_port" -k "$work/key" 2>"$work/listen-http.log" & pids+=($!)
"$BIN" connect -s "127.0.0.1:$con_http" -t "127.0.0.1:$lsn_http" -k "$work/key" 2>"$work/connect-http.log" & pids+=($!)
for p in "$http_port" "$lsn_http" "$con_http"; do "$check" wait -c "127.0.0.1:$p" || fail "port $p did not open"; done
curl -fsS --max-time 120 -o "$work/got.bin" -w '   curl: %{size_download} bytes at %{speed_download} B/s\n' \
  "http://127.0.0.1:$con_http/big.bin" || fail "curl through spipe"
got=$(sha256sum <"$work/got.bin" | cut -d' ' -f1)
[ "$got" = "$want" ] || fail "100 MB through curl: sha256 $got, want $want"
echo "   100 MB via curl: sha256 matches"

# --- 3. the multiplexed mode -----------------------------------------------
echo "== curl and ssh through spipe connect --mux"
mux_http=$(port)
"$BIN" connect --mux -s "127.0.0.1:$mux_http" -t "127.0.0.1:$lsn_http" -k "$work/key" 2>"$work/connect-mux.log" & pids+=($!)
"$check" wait -c "127.0.0.1:$mux_http" || fail "spipe connect --mux did not start"
fetches=()
for i in 1 2 3 4; do
  curl -fsS --max-time 120 -o "$work/got$i.bin" "http://127.0.0.1:$mux_http/big.bin" & fetches+=($!)
done
for f in "${fetches[@]}"; do wait "$f" || fail "curl through spipe connect --mux"; done
for i in 1 2 3 4; do
  got=$(sha256sum <"$work/got$i.bin" | cut -d' ' -f1)
  [ "$got" = "$want" ] || fail "100 MB through connect --mux (fetch $i): sha256 $got, want $want"
done
[ "$(grep -c 'msg="carrier open"' "$work/connect-mux.log")" = 1 ] || fail "connect --mux opened more than one carrier: $(cat "$work/connect-mux.log")"
echo "   4 x 100 MB via curl at once, streams of one carrier: sha256 matches"
: >"$work/ssh.log"
mux=--mux
out=$(ssh_run 'echo hello over a stream') || fail "ssh through connect --mux: $(cat "$work/ssh.log")"
[ "$out" = "hello over a stream" ] || fail "ssh through connect --mux said: $out"
[ ! -s "$work/ssh.log" ] || fail "the multiplexed ProxyCommand wrote to the terminal: $(cat "$work/ssh.log")"
echo "   ssh with connect --mux as ProxyCommand ran a command and said nothing on the terminal"

# --- 4. real clients: PostgreSQL and Redis ---------------------------------
echo "== pgbench and redis-benchmark through plain and multiplexed tunnels"
source scripts/lib/postgres.sh
pgbin=$(pg_bin)
for tool in "$pgbin/postgres" "$pgbin/pgbench" openssl redis-server redis-benchmark; do
  command -v "$tool" >/dev/null || fail "$tool not found (make e2e-tools)"
done
# As root the cluster runs as nobody, who must reach its directory.
if [ "$(id -u)" = 0 ]; then chmod 711 "$work"; fi
pg_port=$(port)
start_postgres "$work/pg" "$pg_port" e2e-secret || fail "PostgreSQL did not start"
pids+=("$pg_pid")
export PGPASSWORD=e2e-secret PGUSER=spipe PGDATABASE=postgres PGHOST=127.0.0.1
"$pgbin/pgbench" -i -q -s 1 -p "$pg_port" >"$work/pgbench-init.log" 2>&1 || fail "pgbench -i: $(cat "$work/pgbench-init.log")"
redis_port=$(port)
redis-server --bind 127.0.0.1 --port "$redis_port" --save '' --appendonly no --dir "$work" \
  >"$work/redis.log" 2>&1 & pids+=($!)
"$check" wait -c "127.0.0.1:$redis_port" || fail "redis-server did not start"

# serving LOG: waits up to 10 s for a service to log that it serves.
serving() {
  local i
  for i in $(seq 1 100); do
    grep -q 'msg=serving' "$1" && return 0
    sleep 0.1
  done
  return 1
}

# tunnel NAME TARGET_PORT [--mux]: a listen to the target and a connect to
# it, both with metrics and the access log, as NAME-listen and
# NAME-connect; the connect's port is left in tun_port.
tunnel() {
  local name=$1 target=$2 mux=${3:-} l c lm cm
  l=$(port) c=$(port) lm=$(port) cm=$(port)
  # Each waited for by its log, not by a probe connection, which would
  # count as a connection (at the listener, as a handshake failure); the
  # listener first, or a multiplexed connect's first carrier would fail.
  "$BIN" listen -s "127.0.0.1:$l" -t "127.0.0.1:$target" -k "$work/key" --access-log \
    --metrics "127.0.0.1:$lm" 2>"$work/$name-listen.log" & pids+=($!)
  serving "$work/$name-listen.log" || fail "$name-listen did not start"
  "$BIN" connect $mux -s "127.0.0.1:$c" -t "127.0.0.1:$l" -k "$work/key" --access-log \
    --metrics "127.0.0.1:$cm" 2>"$work/$name-connect.log" & pids+=($!)
  serving "$work/$name-connect.log" || fail "$name-connect did not start"
  echo "$lm" >"$work/$name-listen.metrics"
  echo "$cm" >"$work/$name-connect.metrics"
  tun_port=$c
}

# series BODY NAME: the sum of the samples of NAME (any labels) in BODY.
series() { awk -v n="$2" 'index($0, n "{") == 1 || index($0, n " ") == 1 { s += $NF } END { print s + 0 }' <<<"$1"; }

# check_tunnel NAME WHAT: once every connection is closed, both sides of
# the tunnel logged nothing at WARN or above, counted no failure, and
# counted every connection (stream) as an end, with one access-log record
# each; prints their figures.
check_tunnel() {
  local name=$1 what=$2 side body bad conns ends carriers records i of
  for side in listen connect; do
    # The client has gone; the tunnel may still be closing its side.
    for i in $(seq 1 100); do
      body=$(curl -fsS "http://127.0.0.1:$(cat "$work/$name-$side.metrics")/metrics") || fail "$name-$side: no metrics"
      [ "$(series "$body" spipe_connections_open)" != 0 ] || break
      sleep 0.1
    done
    if grep -qE 'level=(WARN|ERROR)' "$work/$name-$side.log"; then
      fail "$name-$side logged a warning after $what: $(grep -E 'level=(WARN|ERROR)' "$work/$name-$side.log" | head -3)"
    fi
    bad=$(grep -E '^spipe_[a-z_]+_(failures|errors)_total\{' <<<"$body" | grep -v ' 0$' || true)
    [ -z "$bad" ] || fail "$name-$side counted failures after $what: $bad"
    conns=$(series "$body" spipe_connections_total)
    ends=$(series "$body" spipe_connection_ends_total)
    # A listener counts a carrier's own connection, which is not a stream.
    carriers=0
    [ "$side" = connect ] || carriers=$(series "$body" spipe_carriers_total)
    records=$(grep -c 'msg="connection closed"' "$work/$name-$side.log" || true)
    [ "$ends" = "$((conns - carriers))" ] && [ "$records" = "$ends" ] ||
      fail "$name-$side after $what: $conns connections ($carriers carriers), $ends ends, $records access-log records"
    of=""
    [ "$carriers" = 0 ] || of=" (one a carrier's own)"
    [ "$carriers" -le 1 ] || of=" ($carriers carriers' own)"
    echo "   $name $side: $conns connections$of, ends $(grep '^spipe_connection_ends_total{' <<<"$body" |
      grep -v ' 0$' | sed -E 's/.*how="([a-z]+)".* ([0-9.e+]+)$/\1=\2/' | paste -sd' '); failure series all 0; no WARN"
  done
}

for kind in plain mux; do
  mux=""; [ "$kind" = plain ] || mux=--mux
  tunnel "pg-$kind" "$pg_port" $mux
  "$pgbin/pgbench" -n -p "$tun_port" -c 20 -j 2 -t 50 >"$work/pgbench-$kind.log" 2>&1 ||
    fail "pgbench -c 20 through the $kind tunnel: $(tail -5 "$work/pgbench-$kind.log")"
  grep -q 'number of failed transactions: 0 ' "$work/pgbench-$kind.log" || fail "pgbench -c 20 ($kind): $(cat "$work/pgbench-$kind.log")"
  check_tunnel "pg-$kind" "pgbench -c 20"
  "$pgbin/pgbench" -n -C -p "$tun_port" -c 20 -j 2 -t 10 >"$work/pgbench-C-$kind.log" 2>&1 ||
    fail "pgbench -C through the $kind tunnel: $(tail -5 "$work/pgbench-C-$kind.log")"
  grep -q 'number of failed transactions: 0 ' "$work/pgbench-C-$kind.log" || fail "pgbench -C ($kind): $(cat "$work/pgbench-C-$kind.log")"
  check_tunnel "pg-$kind" "pgbench -c 20 -C"
  echo "   pgbench ($kind): $(grep -h '^tps' "$work/pgbench-$kind.log" | cut -d' ' -f1-3) with -c 20," \
    "$(grep -h '^tps' "$work/pgbench-C-$kind.log" | cut -d' ' -f1-3) with -C"

  tunnel "redis-$kind" "$redis_port" $mux
  redis-benchmark -h 127.0.0.1 -p "$tun_port" -c 20 -n 20000 -t ping,set,get -q >"$work/redis-benchmark-$kind.log" 2>&1 ||
    fail "redis-benchmark through the $kind tunnel: $(tail -5 "$work/redis-benchmark-$kind.log")"
  [ "$(grep -c 'requests per second' "$work/redis-benchmark-$kind.log")" -ge 4 ] ||
    fail "redis-benchmark ($kind): $(cat "$work/redis-benchmark-$kind.log")"
  check_tunnel "redis-$kind" "redis-benchmark -c 20"
done

# More clients than --max-conns: the first five hold their places for the
# whole run; the others wait one second, are reset, and pgbench stops on
# the error instead of hanging.
echo "== pgbench -c 10 through a connect with --max-conns 5 --max-conns-wait 1s"
l=$(port) c=$(port) cm=$(port)
"$BIN" listen -s "127.0.0.1:$l" -t "127.0.0.1:$pg_port" -k "$work/key" 2>"$work/limit-listen.log" & pids+=($!)
serving "$work/limit-listen.log" || fail "limit-listen did not start"
"$BIN" connect -s "127.0.0.1:$c" -t "127.0.0.1:$l" -k "$work/key" --max-conns 5 --max-conns-wait 1s \
  --metrics "127.0.0.1:$cm" 2>"$work/limit-connect.log" & pids+=($!)
serving "$work/limit-connect.log" || fail "limit-connect did not start"
start=$SECONDS
status=0
timeout 60 "$pgbin/pgbench" -n -p "$c" -c 10 -T 5 >"$work/pgbench-limit.log" 2>&1 || status=$?
[ "$status" != 124 ] || fail "pgbench -c 10 against --max-conns 5 hung"
body=$(curl -fsS "http://127.0.0.1:$cm/metrics")
limited=$(awk '/^spipe_admission_failures_total\{mode="connect",reason="limit"\}/ { print $NF }' <<<"$body")
[ "${limited:-0}" != 0 ] || fail "no connection counted under reason=\"limit\": $(cat "$work/pgbench-limit.log")"
grep -q 'level=WARN msg="connection failed" .*stage=admission reason=limit' "$work/limit-connect.log" ||
  fail "connect did not log the limit: $(cat "$work/limit-connect.log")"
echo "   pgbench ended after $((SECONDS - start)) s (exit $status: $(grep -m1 'error' "$work/pgbench-limit.log" || echo none))," \
  "$limited connection(s) reset and counted under reason=\"limit\""

# --- 5. behind HAProxy --------------------------------------------------------
echo "== two spipe listen behind HAProxy (contrib/haproxy/haproxy.cfg)"
if ! SPIPE_E2E_BIN="$BIN" SPIPE_HAPROXY="$HAPROXY" $GO test -count=1 -v -run '^TestHAProxy' ./internal/lbtest \
    >"$work/lbtest.log" 2>&1; then
  cat "$work/lbtest.log" >&2
  fail "spipe behind HAProxy"
fi
grep -E '^(=== RUN|--- |    haproxy_test.go:[0-9]+: (admission figures|drain))' "$work/lbtest.log" |
  sed -e 's/^    haproxy_test.go:[0-9]*: /   /' -e 's/^/   /'

# --- 6. sealed files in a tar pipeline ---------------------------------------
echo "== tar c | spipe seal; spipe open | tar x"
tree=$work/tree
mkdir -p "$tree/sub/deeper"
head -c 3000000 /dev/urandom >"$tree/big.bin"
for i in $(seq 50); do echo "file $i" >"$tree/sub/small$i.txt"; done
: >"$tree/sub/deeper/empty"
ln -s ../big.bin "$tree/sub/link"
tar -C "$work" -cf - tree | "$BIN" seal -k "$work/key" >"$work/tree.tar.spipe" || fail "tar c | spipe seal"
mkdir "$work/restored"
"$BIN" open -k "$work/key" "$work/tree.tar.spipe" | tar -C "$work/restored" -xf - || fail "spipe open | tar x"
diff -r "$tree" "$work/restored/tree" >/dev/null || fail "the restored tree differs from the original"
echo "   tar c | spipe seal > f; spipe open f | tar x: the tree comes back identical"
# The same archive from standard input, opened to -o, listed by tar.
"$BIN" open -k "$work/key" -o "$work/tree.tar" <"$work/tree.tar.spipe" || fail "spipe open -o from stdin"
[ "$(tar -tf "$work/tree.tar" | grep -c 'small.*\.txt')" = 50 ] || fail "tar -t of the opened archive"
# A range: the first member's tar header (512 bytes at 0) names it.
"$BIN" open -k "$work/key" --offset 0 --length 512 "$work/tree.tar.spipe" | head -c 100 | grep -aq '^tree/' ||
  fail "a range read does not start with the first member's name"
echo "   open -o from stdin, tar -t, and a 512-byte range read agree"
# Damage in the middle: spipe open fails with exit 13 naming the chunk;
# with -o nothing is left; piped to tar, only what came before reaches it.
cp "$work/tree.tar.spipe" "$work/bad.spipe"
printf 'X' | dd of="$work/bad.spipe" bs=1 seek=1000000 conv=notrunc status=none
status=0
"$BIN" open -k "$work/key" -o "$work/bad.tar" "$work/bad.spipe" 2>"$work/open-bad.log" || status=$?
[ "$status" = 13 ] || fail "a damaged archive: exit $status, want 13: $(cat "$work/open-bad.log")"
grep -q 'chunk 3 (at byte' "$work/open-bad.log" || fail "the error does not name the chunk: $(cat "$work/open-bad.log")"
[ ! -e "$work/bad.tar" ] || fail "a failed open -o left its output"
[ -z "$(find "$work" -maxdepth 1 -name '.bad.tar.spipe-*')" ] || fail "a failed open -o left a temporary file"
mkdir "$work/partial"
set +o pipefail
{ "$BIN" open -k "$work/key" "$work/bad.spipe" 2>/dev/null | tar -C "$work/partial" -xf - 2>/dev/null; pipe=("${PIPESTATUS[@]}"); } || true
set -o pipefail
[ "${pipe[0]}" = 13 ] || fail "spipe open | tar x of a damaged archive: spipe exit ${pipe[0]}, want 13"
echo "   a damaged archive: exit 13 naming chunk 3, no -o output, the pipe sees the failure"
echo "e2e OK"
