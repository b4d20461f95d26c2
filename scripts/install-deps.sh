#!/usr/bin/env bash
# Installs every Debian 12 package eredu needs to build, test, fuzz and format.
#
# Idempotent and fast when nothing is missing: it asks dpkg-query first and only runs
# `apt-get update` + `apt-get install` for the packages that are not installed yet (the update
# runs at most once per invocation). Runs apt-get directly as root, through sudo otherwise.
#
# The CUDA toolkit is not a Debian package here: the machine image provides CUDA 13 at
# /usr/local/cuda. This script only reports whether it is there (EREDU_WITH_CUDA=AUTO turns the
# CUDA backend on when it is).
#
# Environment: EREDU_SKIP_DEPS=1 skips everything (for machines whose packages are managed
# elsewhere, e.g. the GPU machine in ../shared/device/).
set -euo pipefail

if [[ "${EREDU_SKIP_DEPS:-0}" == "1" ]]; then
  echo "install-deps: EREDU_SKIP_DEPS=1, not checking packages"
  exit 0
fi

packages=(
  # compilers and build tools
  build-essential g++ cmake ninja-build
  # clang 14 for the libFuzzer targets and sanitizer runtimes, and the formatter
  clang clang-14 libclang-rt-14-dev llvm clang-format
  # libraries
  libfmt-dev libspdlog-dev nlohmann-json3-dev libcli11-dev libpcre2-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  # Vulkan backend: headers + loader, shader compiler, a software driver (lavapipe), tools
  libvulkan-dev glslc mesa-vulkan-drivers vulkan-validationlayers vulkan-tools
  # helper scripts and reference generators
  python3
)

missing=()
for pkg in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${db:Status-Status}' "$pkg" 2>/dev/null || true)
  if [[ "$status" != "installed" ]]; then
    missing+=("$pkg")
  fi
done

if ((${#missing[@]} == 0)); then
  echo "install-deps: all ${#packages[@]} Debian packages are installed"
else
  echo "install-deps: installing ${#missing[@]} missing package(s): ${missing[*]}"
  if [[ "$(id -u)" == "0" ]]; then
    sudo=()
  elif command -v sudo >/dev/null 2>&1; then
    sudo=(sudo)
  else
    echo "install-deps: not root and sudo is not available; install as root: apt-get install ${missing[*]}" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt_opts=(-y -q -o Dpkg::Use-Pty=0 --no-install-recommends)
  updated=0
  if ! compgen -G '/var/lib/apt/lists/*_Packages*' >/dev/null; then
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
    updated=1
  fi
  # Refresh the package lists only when there are none (a fresh image) or when installing
  # against the lists already there fails (stale lists); at most once.
  if ! "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install "${apt_opts[@]}" "${missing[@]}"; then
    if ((updated)); then exit 1; fi
    echo "install-deps: refreshing the package lists (apt-get update) and retrying"
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install "${apt_opts[@]}" "${missing[@]}"
  fi
fi

if [[ -x /usr/local/cuda/bin/nvcc ]]; then
  cuda_version=$(/usr/local/cuda/bin/nvcc --version 2>/dev/null | sed -n 's/.*release \([0-9.]*\).*/\1/p')
  echo "install-deps: CUDA toolkit found at /usr/local/cuda (release ${cuda_version:-unknown})"
else
  echo "install-deps: no CUDA toolkit at /usr/local/cuda (the CUDA backend stays off; it comes with the machine image, not apt)"
fi
