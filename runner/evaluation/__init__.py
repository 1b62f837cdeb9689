"""`pagerunner eval`: accuracy of an engine against ground truth or a PDF's own text layer."""
