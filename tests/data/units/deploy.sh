#!/usr/bin/env bash
set -euo pipefail

log() {
  echo "[deploy] $*"
}

deploy_app() {
  log "deploying $1"
  rsync -a build/ "$1"
}

deploy_app "${1:-staging}"
