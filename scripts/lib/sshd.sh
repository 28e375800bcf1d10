# Shared by e2e.sh and bench-pipe.sh: a private sshd on a loopback port.

# private_sshd_config DIR PORT [EXTRA_CONFIG_LINE...]: host and user keys
# in DIR (DIR/user_key logs in), and DIR/sshd_config for an sshd on
# 127.0.0.1:PORT that accepts only that key. Start it with
# `sshd -D -e -f DIR/sshd_config`.
private_sshd_config() {
  local dir=$1 port=$2; shift 2
  ssh-keygen -q -t ed25519 -N '' -f "$dir/host_key"
  ssh-keygen -q -t ed25519 -N '' -f "$dir/user_key"
  cp "$dir/user_key.pub" "$dir/authorized_keys"
  chmod 600 "$dir/authorized_keys"
  {
    cat <<CONF
Port $port
ListenAddress 127.0.0.1
HostKey $dir/host_key
PidFile $dir/sshd.pid
AuthorizedKeysFile $dir/authorized_keys
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
PermitRootLogin prohibit-password
LogLevel ERROR
CONF
    printf '%s\n' "$@"
  } >"$dir/sshd_config"
  # sshd insists on its privilege-separation directory when run as root.
  if [ "$(id -u)" = 0 ]; then mkdir -p /run/sshd && chmod 0755 /run/sshd; fi
}
