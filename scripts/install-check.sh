#!/usr/bin/env bash
# make install-check (part of make test): `make install` into a scratch
# DESTDIR with the Makefile's paths (PREFIX=/usr/local unless told
# otherwise), then check the installed files as the system will use them:
#   - the binary runs;
#   - systemd-analyze verify passes on the installed units, with the
#     installed man pages on MANPATH (verify runs `man` for every
#     Documentation=man: page) and the scratch tree as --root (so
#     ExecStart= must name the installed binary); the standard targets the
#     units hang from are copied in from this system;
#   - man finds spipe(1) and spipe-listen(1) there; bash loads the
#     completion; the zsh and fish files are completions for spipe;
#   - make uninstall leaves no file behind.
# Needs systemd-analyze (systemd) and man (man-db): make test-tools.
set -euo pipefail
cd "$(dirname "$0")/.."
: "${BINDIR:?} ${MAN1DIR:?} ${BASHCOMPDIR:?} ${ZSHCOMPDIR:?} ${FISHCOMPDIR:?} ${UNITDIR:?}"
MAKE=${MAKE:-make}

root=$(mktemp -d "${TMPDIR:-/tmp}/spipe-install.XXXXXX")
trap 'rm -rf "$root"' EXIT
fail() { echo "install-check FAILED: $*" >&2; exit 1; }

$MAKE --no-print-directory install DESTDIR="$root" >/dev/null
"$root$BINDIR/spipe" --version >/dev/null || fail "the installed binary does not run"
grep -q "^ExecStart=$BINDIR/spipe listen " "$root$UNITDIR/spipe-listen@.service" ||
  fail "the installed listen unit does not run $BINDIR/spipe"

manpath=$(dirname "$root$MAN1DIR")
pages=$(find "$root$MAN1DIR" -name '*.1' | wc -l)
for page in spipe spipe-listen spipe-connect; do
  [ "$(MANPATH=$manpath man -w "$page")" = "$root$MAN1DIR/$page.1" ] || fail "man does not find the installed $page(1)"
done

# systemd-analyze resolves everything under --root: our units and, for
# their After=/WantedBy= targets, the system's own (copied to /etc, the
# administrator's directory, and removed again before uninstall).
admin="$root/etc/systemd/system"
mkdir -p "$admin"
find /usr/lib/systemd/system -maxdepth 1 -type f -name '*.target' -exec cp {} "$admin/" \;
out=$(cd / && MANPATH=$manpath systemd-analyze verify --root="$root" \
  spipe-listen@8022.service spipe-connect@5432.service spipe-listen@8022.socket spipe-connect@5432.socket 2>&1) ||
  fail "systemd-analyze verify on the installed units: $out"
[ -z "$out" ] || fail "systemd-analyze verify warned about the installed units: $out"
rm -rf "$root/etc"

bash -c "source '$root$BASHCOMPDIR/spipe' && complete -p spipe" | grep -q -- '-F __start_spipe spipe$' ||
  fail "bash does not load the installed completion"
head -1 "$root$ZSHCOMPDIR/_spipe" | grep -q '^#compdef spipe' || fail "the zsh completion is not for spipe"
grep -q 'complete -c spipe' "$root$FISHCOMPDIR/spipe.fish" || fail "the fish completion is not for spipe"

$MAKE --no-print-directory uninstall DESTDIR="$root" >/dev/null
left=$(find "$root" -type f)
[ -z "$left" ] || fail "make uninstall left: $left"
echo "make install (DESTDIR): binary, $pages man pages, completions and units verified; make uninstall removed them all"
