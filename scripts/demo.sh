#!/usr/bin/env bash
# make demo: build spipe, make a throwaway key, start a checksum sink, a
# spipe listen in front of it and a spipe connect in front of that, all on
# loopback; push DEMO_SIZE (default 1 GiB) through and check it arrived
# intact. Everything started here is stopped on exit.
set -euo pipefail
cd "$(dirname "$0")/.."

GO=${GO:-go}
SIZE=${DEMO_SIZE:-1GiB}
BIN=${BIN:-bin/spipe}

work=$(mktemp -d "${TMPDIR:-/tmp}/spipe-demo.XXXXXX")
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "== building $BIN"
mkdir -p "$(dirname "$BIN")"
$GO build -o "$BIN" ./cmd/spipe
$GO build -o "$work/pipecheck" ./internal/tools/pipecheck
check="$work/pipecheck"

echo "== key (fingerprint, file): $("$BIN" keygen "$work/key")"
sink=127.0.0.1:$("$check" freeport)
lsn=127.0.0.1:$("$check" freeport)
con=127.0.0.1:$("$check" freeport)

echo "== sink on $sink, spipe listen on $lsn, spipe connect on $con"
"$check" sink -l "$sink" >/dev/null & pids+=($!)
"$BIN" listen -s "$lsn" -t "$sink" -k "$work/key" 2>"$work/listen.log" & pids+=($!)
"$BIN" connect -s "$con" -t "$lsn" -k "$work/key" 2>"$work/connect.log" & pids+=($!)
for a in "$sink" "$lsn" "$con"; do "$check" wait -c "$a"; done

echo "== pushing $SIZE: client -> spipe connect -> (encrypted) -> spipe listen -> sink"
if ! "$check" push -c "$con" -n "$SIZE"; then
  echo "demo FAILED; logs:" >&2
  cat "$work/listen.log" "$work/connect.log" >&2
  exit 1
fi
"$BIN" version | sed -n 's/^\(chacha20 kernel: .*\)$/== \1 (ChaCha20-Poly1305 is the default suite)/p'
