#!/usr/bin/env bash
# Installs fabricsim's build dependencies from Debian 12 packages. Idempotent: packages already
# installed are left alone, and apt is not touched at all when nothing is missing.
# Run as root (or with sudo available).
set -euo pipefail

packages=(
  build-essential cmake
  libboost-graph-dev libboost-program-options-dev
  libyaml-cpp-dev nlohmann-json3-dev libeigen3-dev catch2
  gnuplot-nox
  libmetis-dev libopenmpi-dev openmpi-bin
  zlib1g-dev
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
echo "setup: installing ${missing[*]}" >&2
$sudo apt-get update -q
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
