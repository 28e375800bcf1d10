#!/usr/bin/env bash
# need.sh COMMAND:PACKAGE...: make sure each COMMAND is installed, from the
# Debian PACKAGE named beside it. As root, the missing ones are installed
# with apt-get (one update, one install); otherwise the one command to run
# is printed and the script fails. `make test` and .ci/run call it.
# Besides PATH, a command is looked for where Debian keeps programs off
# it: /usr/sbin (sshd), and PostgreSQL's server directories
# (/usr/lib/postgresql/VERSION/bin: initdb, postgres).
set -euo pipefail

found() {
  local dir
  command -v "$1" >/dev/null 2>&1 && return 0
  for dir in /usr/sbin /usr/lib/postgresql/*/bin; do
    [ -x "$dir/$1" ] && return 0
  done
  return 1
}

missing=()
for pair in "$@"; do
  cmd=${pair%%:*} pkg=${pair##*:}
  found "$cmd" || missing+=("$pkg")
done
[ ${#missing[@]} -eq 0 ] && exit 0

# One package may provide several of the commands.
mapfile -t missing < <(printf '%s\n' "${missing[@]}" | sort -u)
if [ "$(id -u)" != 0 ]; then
  echo "missing: ${missing[*]}; install with:" >&2
  echo "  sudo apt-get install -y --no-install-recommends ${missing[*]}" >&2
  exit 1
fi
echo "== installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends "${missing[@]}"
