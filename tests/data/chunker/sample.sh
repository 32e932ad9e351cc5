#!/usr/bin/env bash
# Sample shell script for the chunker tests.
set -euo pipefail

ROOT_DIR="$(cd "$(dirname "$0")" && pwd)"

# Prints a log line.
log() {
  local level="$1"
  echo "[$level] $2" >&2
}

function build_all {
  for dir in "$ROOT_DIR"/*; do
    log info "building $dir"
    make -C "$dir"
  done
}

build_all
log info "done"
