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
#   4. HAProxy with contrib/haproxy/haproxy.cfg in front of two spipe
#      listen (internal/lbtest, run here with this script's spipe):
#      connections spread, the target learns the client's own address, a
#      flood from one address leaves another's echoes within 3 s (with and
#      without --accept-proxy-from, figures printed), and a listener
#      stopped with SIGTERM loses nothing once its /healthz said 503.
# Needs sshd (openssh-server), ssh, curl, python3 and haproxy. Everything
# started here is stopped on exit.
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
# --- 4. behind HAProxy --------------------------------------------------------
echo "== two spipe listen behind HAProxy (contrib/haproxy/haproxy.cfg)"
if ! SPIPE_E2E_BIN="$BIN" SPIPE_HAPROXY="$HAPROXY" $GO test -count=1 -v -run '^TestHAProxy' ./internal/lbtest \
    >"$work/lbtest.log" 2>&1; then
  cat "$work/lbtest.log" >&2
  fail "spipe behind HAProxy"
fi
grep -E '^(=== RUN|--- |    haproxy_test.go:[0-9]+: (admission figures|drain))' "$work/lbtest.log" |
  sed -e 's/^    haproxy_test.go:[0-9]*: /   /' -e 's/^/   /'
echo "e2e OK"
