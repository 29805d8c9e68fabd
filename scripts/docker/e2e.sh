#!/usr/bin/env bash
# The container image and the compose stack, end to end (docs/self-hosting.md; run by CI,
# never by `npm test`): builds the base images (scripts/docker/base-images.sh, kept between
# runs) and the service's image, starts compose.yaml (PostgreSQL, Redis, one api, one
# worker), signs up, mints an object through the api container, waits until the worker
# container has sealed and proven its batch (checked by the SDK's offline verifier), then
# `down` and `up` again and checks the object and the batch are still there.
#
# Needs root (it installs docker.io, docker-compose and debootstrap from Debian when they
# are missing and starts dockerd when none runs) and the npm registry.
set -euo pipefail
cd "$(dirname "$0")/../.."

SECONDS_AT_START=$SECONDS
step() {
  local name="$1" start=$SECONDS
  shift
  echo "== e2e: $name"
  "$@"
  echo "   ($name: $((SECONDS - start)) s)"
}

ensure_tools() {
  local missing=()
  command -v docker >/dev/null || missing+=(docker.io)
  command -v debootstrap >/dev/null || missing+=(debootstrap)
  if ! docker compose version >/dev/null 2>&1 && ! command -v docker-compose >/dev/null; then
    missing+=(docker-compose)
  fi
  if [ "${#missing[@]}" -gt 0 ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  fi
  if ! docker info >/dev/null 2>&1; then
    # Debian's package starts the daemon where systemd runs; elsewhere it is started here.
    nohup dockerd >/var/log/ons-e2e-dockerd.log 2>&1 &
    echo "   started dockerd (pid $!)"
    for _ in $(seq 60); do docker info >/dev/null 2>&1 && break; sleep 1; done
    docker info >/dev/null
  fi
}
step "tools" ensure_tools

if docker compose version >/dev/null 2>&1; then COMPOSE=(docker compose); else COMPOSE=(docker-compose); fi
echo "   $("${COMPOSE[@]}" version | head -1)"

step "base images" bash scripts/docker/base-images.sh
IMAGE="ons:e2e"
build_image() { docker build -q --build-arg BASE_IMAGE=ons-local/node:24 -t "$IMAGE" . >/dev/null; }
step "image build" build_image
echo "   $IMAGE: $(docker image inspect -f '{{.Size}}' "$IMAGE" | numfmt --to=iec)"

# A project of its own, secrets made for this run, a free port.
WORK="$(mktemp -d)"
PROJECT="onse2e$$"
PORT="$(node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})")"
secret() { node -e "console.log(require('crypto').randomBytes(18).toString('hex'))"; }
cat >"$WORK/.env" <<EOF
POSTGRES_PASSWORD=$(secret)
REDIS_PASSWORD=$(secret)
ONS_IMAGE=$IMAGE
NODE_BASE_IMAGE=ons-local/node:24
POSTGRES_IMAGE=ons-local/postgres:15
REDIS_IMAGE=ons-local/redis:7
ONS_PORT=$PORT
PUBLIC_URL=http://127.0.0.1:$PORT
WEBAUTHN_RP_ID=127.0.0.1
WEBAUTHN_ORIGINS=http://127.0.0.1:$PORT
BATCH_MAX_SECONDS=2
EOF
compose() { "${COMPOSE[@]}" -p "$PROJECT" --env-file "$WORK/.env" -f compose.yaml "$@"; }
cleanup() {
  local rc=$?
  if [ "$rc" -ne 0 ]; then
    compose ps || true
    compose logs --tail=40 || true
  fi
  compose down -v --remove-orphans >/dev/null 2>&1 || true
  rm -rf "$WORK"
  echo "== e2e: $([ "$rc" -eq 0 ] && echo passed || echo FAILED) in $((SECONDS - SECONDS_AT_START)) s"
}
trap cleanup EXIT

BASE="http://127.0.0.1:$PORT"
wait_healthy() {
  local until=$((SECONDS + 180))
  until node -e "fetch(process.argv[1]).then((r) => process.exit(r.status === 200 ? 0 : 1), () => process.exit(1))" "$BASE/readyz"; do
    [ $SECONDS -lt $until ] || { echo "api not ready in 180 s"; return 1; }
    sleep 2
  done
  local worker
  worker="$(compose ps -q worker)"
  until [ "$(docker inspect -f '{{.State.Health.Status}}' "$worker")" = healthy ]; do
    [ $SECONDS -lt $until ] || { echo "worker not healthy in 180 s"; return 1; }
    sleep 2
  done
}
client() { node_modules/.bin/tsx scripts/docker/e2e-client.ts "$1" "$BASE" "$WORK/state.json"; }

step "compose up" compose up -d --no-build
step "healthy" wait_healthy
# Each container runs the role it was given (the api runs no loop: the worker seals).
# (Captured first: `grep -q` leaving a pipe early would fail the pipeline with SIGPIPE.)
compose logs --no-color api >"$WORK/api.log"
compose logs --no-color worker >"$WORK/worker.log"
grep -q '"role":"api"' "$WORK/api.log"
grep -q '"role":"worker"' "$WORK/worker.log"

ORG="$(client signup)"
echo "   signed up: organization $ORG"
TX="0x$(node -e "console.log(require('crypto').randomBytes(32).toString('hex'))")"
compose exec -T api node dist/cli/ons.js deposits credit --org "$ORG" --amount 1 --tx-hash "$TX" --token ONS
step "mint through the api" client mint
step "batch sealed by the worker" client sealed

# The operator command works in the image (tar, a writable /data): a backup of the stack.
backup_in_container() {
  compose exec -T api node dist/cli/ons.js backup /data/e2e-backup.tgz >"$WORK/backup.json"
  cat "$WORK/backup.json"
  grep -q '"method":"builtin"' "$WORK/backup.json"
}
step "backup in the api container" backup_in_container
step "compose down" compose down
step "compose up again" compose up -d --no-build
step "healthy again" wait_healthy
step "data kept" client check
