#!/usr/bin/env bash
# Installs what eredu needs, builds it (Release) and runs the main job: `eredu-run` generates a
# TinyStories story with the stories260K model on the CPU backend (the text streams to stdout,
# load progress and prompt / generation speed to stderr).
#
#   scripts/run-main.sh                 eredu-run -m $EREDU_MODELS_DIR/stories260K.gguf
#                                                 -p "Once upon a time" -n 256 -t 2
#   scripts/run-main.sh ARGS...         eredu-run with your own arguments (see eredu-run --help)
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
cmake --build "$build_dir" -j "$jobs" --target eredu-run eredu-inspect

shared_dir=${EREDU_SHARED_DIR:-$root/../shared}
models_dir=${EREDU_MODELS_DIR:-$shared_dir/models}
if (($# == 0)); then
  model=$models_dir/stories260K.gguf
  if [[ ! -e "$model" ]]; then
    echo "run-main: $model not found. Put stories260K.gguf there (it is ggml-org/models," >&2
    echo "tinyllamas/stories260K.gguf on Hugging Face) or set EREDU_MODELS_DIR." >&2
    exit 1
  fi
  set -- -m "$model" -p "Once upon a time" -n 256 -t 2 --seed 42
fi

exec "$build_dir/bin/eredu-run" "$@"
