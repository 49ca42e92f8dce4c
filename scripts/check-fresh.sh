#!/usr/bin/env bash
# The fresh-clone check: what a user gets from `git clone`, `npm ci`, `npm test` on a machine with
# only Node. It clones the committed HEAD into an empty temporary folder (so nothing sits beside
# the clone: no ../shared), hides ffmpeg, ffprobe and every Chromium from PATH, installs with
# `npm ci`, runs `npm test`, and passes only when node's test summary says 0 failed, 0 skipped,
# 0 todo. Uncommitted changes are not part of the check. About 4 minutes on 2 cores.
#
#   npm run check:fresh            (keeps the clone with KEEP=1)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/eqakit-fresh-XXXXXX")"
cleanup() { if [ "${KEEP:-0}" = 1 ]; then echo "kept $work"; else rm -rf "$work"; fi; }
trap cleanup EXIT

git clone --quiet --no-hardlinks "$root" "$work/eqakit"

# A PATH of look-alike folders: every program of the real PATH, less the binaries that a fresh
# machine lacks.
hidden=" ffmpeg ffprobe chromium chromium-browser google-chrome google-chrome-stable "
shadow_path=""
i=0
IFS=':' read -r -a dirs <<<"$PATH"
for dir in "${dirs[@]}"; do
  [ -d "$dir" ] || continue
  shadow="$work/path/$i"
  mkdir -p "$shadow"
  for program in "$dir"/*; do
    name="$(basename "$program")"
    case "$hidden" in *" $name "*) continue ;; esac
    [ -x "$program" ] && [ ! -d "$program" ] && ln -s "$program" "$shadow/$name" 2>/dev/null || true
  done
  shadow_path="${shadow_path:+$shadow_path:}$shadow"
  i=$((i + 1))
done
for program in ffmpeg ffprobe chromium; do
  if PATH="$shadow_path" command -v "$program" >/dev/null 2>&1; then echo "check:fresh: $program is still on PATH" >&2; exit 1; fi
done

cd "$work/eqakit"
log="$work/test.log"
PATH="$shadow_path" npm ci --no-audit --no-fund
set +e
PATH="$shadow_path" npm test 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
set -e

count() { sed -n "s/^# $1 \([0-9][0-9]*\)$/\1/p" "$log" | tail -1; }
tests="$(count tests)" failed="$(count fail)" skipped="$(count skipped)" todo="$(count todo)"
echo "check:fresh: ${tests:-?} tests, ${failed:-?} failed, ${skipped:-?} skipped, ${todo:-?} todo (npm test exit $status)"
if [ "$status" -ne 0 ] || [ "${failed:-x}" != 0 ] || [ "${skipped:-x}" != 0 ] || [ "${todo:-x}" != 0 ]; then
  echo "check:fresh: FAILED" >&2
  exit 1
fi
echo "check:fresh: passed"
