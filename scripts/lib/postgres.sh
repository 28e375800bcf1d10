# Used by e2e.sh: a throwaway PostgreSQL cluster on a loopback port.

# pg_bin prints the newest PostgreSQL server directory Debian installed
# (its server programs are not on PATH: /usr/lib/postgresql/VERSION/bin).
pg_bin() {
  local dirs
  dirs=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V) || true
  [ -n "$dirs" ] || { echo "no /usr/lib/postgresql/*/bin (apt-get install postgresql)" >&2; return 1; }
  echo "$dirs" | tail -1
}

# pg_as CMD...: runs CMD as the cluster's owner. PostgreSQL refuses to run
# as root, so as root that is nobody; otherwise the caller. (postgres
# itself is started without it: see start_postgres.)
pg_as() {
  if [ "$(id -u)" = 0 ]; then
    setpriv --reuid=nobody --regid=nogroup --clear-groups -- "$@"
  else
    "$@"
  fi
}

# start_postgres DIR PORT PASSWORD: a cluster in DIR (made, and given to
# the cluster's owner) whose superuser "spipe" logs in with PASSWORD over
# TCP (scram-sha-256, as Debian's pg_hba.conf asks on 127.0.0.1), with
# ssl=on as Debian configures it, on 127.0.0.1:PORT. It runs in the
# foreground of a background job; its PID is left in pg_pid. Returns once
# the server accepts connections.
start_postgres() {
  local dir=$1 port=$2 password=$3 bin
  bin=$(pg_bin)
  mkdir -p "$dir"
  printf '%s\n' "$password" >"$dir/pwfile"
  openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=localhost \
    -keyout "$dir/server.key" -out "$dir/server.crt" 2>/dev/null
  chmod 600 "$dir/server.key"
  if [ "$(id -u)" = 0 ]; then chown -R nobody:nogroup "$dir"; fi
  pg_as "$bin/initdb" -D "$dir/data" -U spipe --pwfile="$dir/pwfile" \
    --auth-host=scram-sha-256 --auth-local=trust >"$dir/initdb.log" 2>&1 ||
    { cat "$dir/initdb.log" >&2; return 1; }
  cat >>"$dir/data/postgresql.conf" <<CONF
listen_addresses = '127.0.0.1'
port = $port
unix_socket_directories = '$dir'
ssl = on
ssl_cert_file = '$dir/server.crt'
ssl_key_file = '$dir/server.key'
max_connections = 200
fsync = off
CONF
  # Started as a command, not through the pg_as function: $! is then the
  # postmaster itself (setpriv execs it), which the caller's kill stops,
  # not a subshell that would leave it running.
  if [ "$(id -u)" = 0 ]; then
    setpriv --reuid=nobody --regid=nogroup --clear-groups -- "$bin/postgres" -D "$dir/data" >"$dir/postgres.log" 2>&1 &
  else
    "$bin/postgres" -D "$dir/data" >"$dir/postgres.log" 2>&1 &
  fi
  pg_pid=$!
  local i
  for i in $(seq 1 100); do
    "$bin/pg_isready" -q -h 127.0.0.1 -p "$port" && return 0
    kill -0 "$pg_pid" 2>/dev/null || break
    sleep 0.1
  done
  cat "$dir/postgres.log" >&2
  return 1
}
