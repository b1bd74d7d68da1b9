#!/usr/bin/env bash
# Runs the README's two commands on a brand-new Debian 12 system, as a new
# user would: debootstraps a minimal bookworm root into a folder (with this
# machine's Debian apt sources), copies in a clean clone of the committed
# tree, and runs the commands from README.md's first `sh` block inside it
# with chroot. A package that scripts/setup.sh forgets, or a file that only
# the developer's machine has, fails here.
#
#   scripts/fresh-root-check.sh [WORK_DIR]      (root; needs the network to
#                                               Debian's mirrors)
#
# Cached between runs, under FFNC_CACHE (default /var/cache/ffnc): the
# debootstrap tarball of the base system, and the downloaded .deb files
# (apt's archive cache, shared with the root). Both only save downloads:
# every run unpacks a new root and installs every package into it, and the
# project is built from nothing. The root is deleted afterwards unless
# FFNC_KEEP_ROOT=1. Prints the test command's summary line last.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)

if [ "$(id -u)" -ne 0 ]; then
  echo "fresh-root-check: needs root (debootstrap, mount, chroot)" >&2
  exit 2
fi
if ! command -v debootstrap >/dev/null; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    debootstrap >/dev/null
fi

work=${1:-$(mktemp -d /var/tmp/ffnc-fresh-root.XXXXXX)}
root="$work/root"
cache=${FFNC_CACHE:-/var/cache/ffnc}
mkdir -p "$cache/apt-archives/partial" "$work"

# This machine's apt sources, Debian's only (deb822 .sources and one-line
# .list files whose URIs are Debian's).
sources=()
for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.sources \
         /etc/apt/sources.list.d/*.list; do
  [ -f "$f" ] && grep -qE '^[^#]*https?://[a-z.]*debian\.org' "$f" && sources+=("$f")
done
if [ ${#sources[@]} -eq 0 ]; then
  echo "fresh-root-check: no Debian apt sources on this machine" >&2
  exit 2
fi
mirror=$(grep -hoE 'https?://deb\.debian\.org/debian/?' "${sources[@]}" | head -1)
mirror=${mirror:-http://deb.debian.org/debian}

mounted=()
cleanup() {
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
    umount -l "${mounted[$i]}" 2>/dev/null || true
  done
  if [ "${FFNC_KEEP_ROOT:-0}" != 1 ]; then
    rm -rf "$root"
  fi
}
trap cleanup EXIT

# The base system: minbase bookworm, from the cached tarball when there is one.
tarball="$cache/debootstrap-bookworm-minbase-amd64.tgz"
if [ ! -s "$tarball" ]; then
  echo "fresh-root-check: downloading the Debian 12 base system"
  debootstrap --variant=minbase --make-tarball="$tarball.tmp" bookworm \
    "$work/tarball-scratch" "$mirror" >"$work/debootstrap-download.log" 2>&1 \
    || { tail -20 "$work/debootstrap-download.log"; exit 1; }
  mv "$tarball.tmp" "$tarball"
  rm -rf "$work/tarball-scratch"
fi
echo "fresh-root-check: unpacking a new Debian 12 root in $root"
rm -rf "$root"
debootstrap --variant=minbase --unpack-tarball="$tarball" bookworm "$root" \
  "$mirror" >"$work/debootstrap.log" 2>&1 \
  || { tail -20 "$work/debootstrap.log"; exit 1; }

# The same apt sources as this machine; apt's downloads are kept in the cache.
rm -f "$root/etc/apt/sources.list" "$root"/etc/apt/sources.list.d/*
for f in "${sources[@]}"; do
  cp "$f" "$root/etc/apt/sources.list.d/$(basename "$f" | sed 's/^sources\.list$/debian.list/')"
done
cp /etc/resolv.conf "$root/etc/resolv.conf"
for m in proc sys dev dev/pts; do
  mkdir -p "$root/$m"
  mount --bind "/$m" "$root/$m"
  mounted+=("$root/$m")
done
mount --bind "$cache/apt-archives" "$root/var/cache/apt/archives"
mounted+=("$root/var/cache/apt/archives")
# Keep the .deb files after installing, so the next run downloads nothing.
echo 'Binary::apt::APT::Keep-Downloaded-Packages "true";' \
  >"$root/etc/apt/apt.conf.d/99keep-debs"

# A clean clone of what is committed, nothing from the working tree.
git clone -q --no-hardlinks "$repo" "$root/ffnc"
rev=$(git -C "$root/ffnc" rev-parse --short HEAD)

# The README's commands, exactly as a new user copies them.
commands=$(awk '/^```sh$/ {block = 1; next} /^```$/ {if (block) exit} block' README.md)
if [ -z "$commands" ]; then
  echo "fresh-root-check: no sh block in README.md" >&2
  exit 2
fi
echo "fresh-root-check: running the README's commands at $rev:"
echo "$commands" | sed 's/^/  $ /'

log="$work/readme-commands.log"
status=0
# A login shell of a new root user: nothing of this machine's environment.
env -i HOME=/root TERM=dumb LANG=C.UTF-8 \
  PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  chroot "$root" /bin/bash -c "cd /ffnc
$(echo "$commands" | sed 's/^\(.*\)$/{ \1; } || exit $?/')" \
  >"$log" 2>&1 || status=$?
tail -40 "$log"
if [ "$status" -ne 0 ]; then
  echo "fresh-root-check: FAILED (exit $status); full log: $log" >&2
  exit "$status"
fi
echo "fresh-root-check: the README's commands pass on a fresh Debian 12 root"
grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -1
