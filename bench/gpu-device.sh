#!/usr/bin/env bash
# The CUDA check on the GPU machine the device tool lends (see ../shared/device/README.md). Run it
# from the repository root there, with .device/ carried:
#   here, once:  bash ../shared/device/prepare.sh libpcre2-dev libpcre2-8-0 libpcre2-16-0 \
#                  libpcre2-32-0 libpcre2-posix3 pkgconf pkgconf-bin libpkgconf3
#                mkdir -p .device/shared/testdata && cp -r ../shared/testdata/quant-zoo \
#                  .device/shared/testdata/     (the GPU kernels' quant-zoo tests; 53 MiB in all)
#   device tool: run(command="bash bench/gpu-device.sh", carry=[".device"], timeout_s=570)
# It unpacks the carried Debian packages into a private prefix as the shared remote.sh does, but
# then runs only bench/gpu-check.sh (which builds just the CUDA tests, the probe, eredu-synth and
# eredu-bench), not a full build of the project: the device's minutes are few. Logs and the
# summary go to $OUT/gpu-check; the console output to $OUT/gpu-check.txt.
set -uo pipefail
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
prefix=/opt/eredu-deps
mkdir -p "$prefix"
for f in .device/debs/*.deb; do dpkg -x "$f" "$prefix"; done
ldconfig 2> /dev/null || true
lib=$prefix/usr/lib/x86_64-linux-gnu
export CMAKE_PREFIX_PATH=$prefix/usr
export PATH=$PATH:$prefix/usr/bin:/usr/local/cuda/bin
# PCRE2 is found through pkg-config. A system that has it keeps its own; otherwise the carried
# libpcre2-dev's .pc files are read with the prefix as their sysroot (they say /usr/include and
# /usr/lib, which here live under the prefix).
if ! command -v pkg-config > /dev/null || ! pkg-config --exists libpcre2-8 2> /dev/null; then
  export PKG_CONFIG_PATH=$lib/pkgconfig:$prefix/usr/share/pkgconfig
  export PKG_CONFIG_SYSROOT_DIR=$prefix
fi
export LD_LIBRARY_PATH=$lib:${LD_LIBRARY_PATH:-}
export EREDU_SHARED_DIR=$PWD/.device/shared EREDU_MODELS_DIR=$PWD/.device/shared/models
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | tee "$OUT/gpu.txt"
OUT=$OUT bash bench/gpu-check.sh 2>&1 | tee "$OUT/gpu-check.txt"
exit "${PIPESTATUS[0]}"
