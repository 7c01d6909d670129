#!/usr/bin/env bash
# The generated regions and checked values of README.md and docs/*.md, rerun from the current
# build (docs/testing.md "Keeping the documentation true"; the markers are described in
# tests/docs/readme_doc.hpp).
#
#   bash scripts/docs/regen.sh              rerun every region and value, the slow ones too
#                                           (minutes), and rewrite the files in place
#   bash scripts/docs/regen.sh --only ID    only region ID and the values ID and ID.*
#   bash scripts/docs/regen.sh --fast       every region and value but the slow ones
#   bash scripts/docs/regen.sh --check      rerun all but the slow ones, write nothing; exit 1
#                                           with a unified diff of each file that differs
#
# Options: --build DIR (default: build; without --check, fabricsim and readme_doc are built
# there first), --bin FABRICSIM and --tool READMEDOC (exact binaries, nothing built: the ctest
# passes its targets), --verbose (the time of each command), FILE... (default: README.md and
# docs/*.md, in that order; ids are unique across them, and a value may read a region of an
# earlier file).
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
build="$top/build"
bin="" tool=""
files=()
args=()
check=0 fast=0
while [ $# -gt 0 ]; do
  case $1 in
    --check) check=1; args+=(--check) ;;
    --fast) fast=1 ;;
    --verbose) args+=(--verbose) ;;
    --only) args+=(--only "$2"); shift ;;
    --build) build=$2; shift ;;
    --bin) bin=$2; shift ;;
    --tool) tool=$2; shift ;;
    -h|--help) sed -n '2,19s/^# \{0,1\}//p' "$0"; exit 0 ;;
    -*) echo "regen.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) files+=("$1") ;;
  esac
  shift
done
if [ -z "$bin" ] && [ -z "$tool" ] && [ $check = 0 ]; then
  cmake --build "$build" -j2 --target fabricsim readme_doc >&2
fi
bin=${bin:-$build/fabricsim}
tool=${tool:-$build/tests/docs/readme_doc}
for f in "$bin" "$tool"; do
  [ -x "$f" ] || { echo "regen.sh: $f is not built (cmake --build $build --target fabricsim readme_doc)" >&2; exit 2; }
done
if [ $fast = 1 ]; then
  # --fast: the check's selection, written back.
  [ $check = 1 ] || args+=(--skip-slow)
fi
if [ ${#files[@]} = 0 ]; then
  files=("$top/README.md")
  for f in "$top"/docs/*.md; do [ -e "$f" ] && files+=("$f"); done
fi
exec "$tool" --bin "$bin" --top "$top" "${args[@]}" "${files[@]}"
