"""PP-OCRv5 mobile on ncnn: the default pagerunner OCR engine (see engine.py)."""
