"""PP-OCRv5 mobile on ncnn: the default pagerunner OCR engine (see engine.py)."""

import os

# ncnn's OpenMP threads spin while waiting by default; on a busy or shared CPU that makes a
# 2-thread run 10x slower than a 1-thread one (measured here: 2.75 s vs 0.21 s per line).
# Passive waiting costs little on an idle machine. libgomp reads this once, when ncnn loads,
# so it only helps if ncnn is not imported yet (the CLI should set it at start-up too).
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
