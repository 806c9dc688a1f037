#!/usr/bin/env bash
# Installs the Debian packages lmdb-regress needs and a fresh machine may lack.
# gcc builds liblmdb, clang builds it too for `--toolchain clang:...`; lld links the random
# code layouts (`--layouts random`, the default for time); libxxhash-dev and
# libdeflate-dev serve the C twin's checksums; valgrind counts instructions where perf
# cannot; libclang regenerates bindings; chromium (with a font to render text) opens the
# HTML report in tests/browser.rs.
set -euo pipefail
need=()
for pkg in gcc clang lld libc6-dev libdeflate-dev libxxhash-dev valgrind git python3-pip libclang-dev chromium fonts-dejavu-core; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "ok installed" || need+=("$pkg")
done
# python3 with pip may come from elsewhere than Debian (pyenv): then it is there already.
if python3 -m pip --version >/dev/null 2>&1; then
  need=("${need[@]/python3-pip}")
fi
need=($(printf '%s\n' "${need[@]}" | grep -v '^$' || true))
[ ${#need[@]} -eq 0 ] && exit 0
if ! command -v apt-get >/dev/null 2>&1; then
  echo "missing packages (Debian names): ${need[*]}; install them with your package manager, then run make again" >&2
  exit 1
fi
echo "installing: ${need[*]}"
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${need[@]}"
