#!/usr/bin/env bash
# The CUDA check on the GPU machine the device tool lends (see ../shared/device/README.md). Run it
# from the repository root there, with .device/ carried:
#   here, once:  bash ../shared/device/prepare.sh libpcre2-dev libpcre2-8-0 libpcre2-16-0 \
#                  libpcre2-32-0 libpcre2-posix3 pkgconf pkgconf-bin libpkgconf3
#                mkdir -p .device/shared/testdata && cp -r ../shared/testdata/quant-zoo \
#                  .device/shared/testdata/     (the GPU kernels' quant-zoo tests; 53 MiB in all)
#   device tool: run(command="bash bench/gpu-device.sh", carry=[".device"], timeout_s=570)
#   (EREDU_GPU_DEVICE_SECONDS=N bash bench/gpu-device.sh for a shorter call: default 540; the
#   check is stopped 15 s before it and its sanitizer steps skipped 60 s before it, so the logs
#   are packed and come back even then)
# It unpacks the carried Debian packages into a private prefix as the shared remote.sh does, but
# then runs only bench/gpu-check.sh (which builds just the CUDA tests, the probe, eredu-synth and
# eredu-bench), not a full build of the project: the device's minutes are few. Logs and the
# summary go to $OUT/gpu-check-logs.tar.gz (the tool brings back 8 files at most); the console
# output to $OUT/gpu-check.txt.
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
export LD_LIBRARY_PATH=$lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export EREDU_SHARED_DIR=$PWD/.device/shared EREDU_MODELS_DIR=$PWD/.device/shared/models
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | tee "$OUT/gpu.txt"
seconds=${EREDU_GPU_DEVICE_SECONDS:-540}
export EREDU_GPU_CHECK_DEADLINE=$((seconds - 60))
export EREDU_GPU_CHECK_STEP_TIMEOUT=${EREDU_GPU_CHECK_STEP_TIMEOUT:-120}
# The build and its 4.7 GB of models outside the working tree.
export EREDU_GPU_CHECK_BUILD=${EREDU_GPU_CHECK_BUILD:-/tmp/build-gpu-check}
OUT=$OUT timeout $((seconds - 15)) bash bench/gpu-check.sh 2>&1 | tee "$OUT/gpu-check.txt"
status=${PIPESTATUS[0]}
cp "$EREDU_GPU_CHECK_BUILD/Testing/Temporary/LastTest.log" "$OUT/gpu-check/" 2> /dev/null
tar -czf "$OUT/gpu-check-logs.tar.gz" -C "$OUT" gpu-check && rm -rf "$OUT/gpu-check"
echo "gpu-device: exit status $status"
exit "$status"
