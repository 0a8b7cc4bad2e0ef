#!/usr/bin/env bash
# Installs the Debian packages the testbed needs (README.md, Building by hand). Idempotent: installs only
# what is missing, and runs `apt-get update` only when something is.
set -euo pipefail

PACKAGES=(
  cmake g++ make ccache pkg-config
  libns3-dev ns3 libgsl-dev libsqlite3-dev libxml2-dev
  libtorch-dev libopenblas0-pthread
  libprotobuf-dev protobuf-compiler
  libboost-program-options-dev
  libgtest-dev libbenchmark-dev
  libxxhash-dev
  libssl-dev
  python3-matplotlib python3-distributed python3-scipy
  chromium
  iproute2
  fortunes
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#PACKAGES[@]} packages present"
  exit 0
fi

echo "setup: installing ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then
    SUDO=sudo
  else
    echo "setup: these Debian packages are missing and installing them needs root:" >&2
    echo "  apt-get install ${missing[*]}" >&2
    echo "Run that as root (or install sudo), then run this script again." >&2
    exit 1
  fi
else
  SUDO=
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
echo "setup: done"
