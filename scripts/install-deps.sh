#!/usr/bin/env bash
# Installs the Debian packages a make target needs and a fresh machine may lack, quietly:
# apt-get's output goes to a log file ($DEPS_LOG, default target/install-deps.log), stderr
# gets one line saying what is installed, and a failure shows the whole log. Nothing goes
# to stdout, which `make run` keeps for the report.
#
# Usage: install-deps.sh SET...   with the sets
#   run       what measuring needs: gcc builds liblmdb; lld links the random code layouts
#             (`--layouts random`, the default for time); valgrind counts instructions
#             where perf cannot; git reads tags and commits (`--git`); pip fetches PyPI's
#             copies of liblmdb
#   c         the C twin's checksum libraries (`--engine c`, `make bench-overhead`)
#   bindings  libclang, which bindgen loads (`make bindings`)
#   test      everything the tests use: the sets above, clang (`--toolchain clang:...`)
#             and chromium with a font to render text (tests/browser.rs)
set -euo pipefail

declare -A sets=(
  [run]="gcc libc6-dev lld valgrind git python3-pip"
  [c]="libdeflate-dev libxxhash-dev"
  [bindings]="libclang-dev"
  [test]="clang chromium fonts-dejavu-core"
)
wanted=()
for set in "$@"; do
  [ -n "${sets[$set]+x}" ] || { echo "install-deps: no package set '$set' (run, c, bindings, test)" >&2; exit 2; }
  # The tests use everything.
  [ "$set" = test ] && wanted+=(${sets[run]} ${sets[c]} ${sets[bindings]})
  wanted+=(${sets[$set]})
done

need=()
for pkg in "${wanted[@]}"; do
  # python3 with pip may come from elsewhere than Debian (pyenv): then it is there already.
  [ "$pkg" = python3-pip ] && python3 -m pip --version >/dev/null 2>&1 && continue
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "ok installed" || need+=("$pkg")
done
need=($(printf '%s\n' "${need[@]}" | awk 'NF && !seen[$0]++'))
[ ${#need[@]} -eq 0 ] && exit 0
if ! command -v apt-get >/dev/null 2>&1; then
  echo "install-deps: missing packages (Debian names): ${need[*]}; install them with your package manager, then run make again" >&2
  exit 1
fi

log=${DEPS_LOG:-target/install-deps.log}
mkdir -p "$(dirname "$log")"
echo "install-deps: installing ${need[*]} with apt-get (its output: $log)" >&2
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
if ! { $SUDO apt-get update -qq && $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}"; } >"$log" 2>&1; then
  echo "install-deps: apt-get failed; its whole output ($log):" >&2
  cat "$log" >&2
  exit 1
fi
