#!/usr/bin/env bash
# Installs what eredu needs, builds it (Release) and runs the main job. Until the generation
# runtime lands, the main job is `eredu-inspect` on the stories260K model: container, metadata,
# tensor table and validation verdict of a real GGUF checkpoint.
#
#   scripts/run-main.sh                 inspect $EREDU_MODELS_DIR/stories260K.gguf
#   scripts/run-main.sh PATH [--json]   inspect another GGUF / SafeTensors file or model folder
#
# Environment:
#   EREDU_SHARED_DIR   the shared data folder (default: ../shared beside the project)
#   EREDU_MODELS_DIR   the models folder (default: $EREDU_SHARED_DIR/models)
#   EREDU_BUILD_DIR    the build folder (default: build; the program lands in its bin/)
#   EREDU_CMAKE_ARGS   extra configure arguments, e.g. -DEREDU_WITH_CUDA=OFF
#   EREDU_JOBS         parallel build jobs (default: nproc)
#   EREDU_SKIP_DEPS=1  do not check the Debian packages (scripts/install-deps.sh)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
build_dir=${EREDU_BUILD_DIR:-build}
jobs=${EREDU_JOBS:-$(nproc)}
read -r -a extra_cmake_args <<<"${EREDU_CMAKE_ARGS:-}"

bash scripts/install-deps.sh

cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DEREDU_BUILD_EXAMPLES=ON \
  "${extra_cmake_args[@]}"
cmake --build "$build_dir" -j "$jobs" --target eredu-inspect

shared_dir=${EREDU_SHARED_DIR:-$root/../shared}
models_dir=${EREDU_MODELS_DIR:-$shared_dir/models}
if (($# == 0)); then
  model=$models_dir/stories260K.gguf
  if [[ ! -e "$model" ]]; then
    echo "run-main: $model not found. Put stories260K.gguf there (it is ggml-org/models," >&2
    echo "tinyllamas/stories260K.gguf on Hugging Face) or set EREDU_MODELS_DIR." >&2
    exit 1
  fi
  set -- "$model"
fi

exec "$build_dir/bin/eredu-inspect" "$@"
