#!/usr/bin/env bash
# One tool over growing seeded subsets of the corpus (results are cached per tool in
# CORPUS/results/, so each step only adds pages, and a killed run resumes):
#   bash benchmarks/corpus_peers.sh TOOL [CORPUS] [extra accuracy.py args]
#   bash benchmarks/corpus_peers.sh tesseract /work/corpus &
#   bash benchmarks/corpus_peers.sh pagerunner /work/corpus --baseline &
# Run one per tool side by side; then `accuracy.py --corpus CORPUS --report-only` builds the tables.
set -u
cd "$(dirname "$0")/.." || exit 1
tool=$1
corpus=${2:-/work/corpus}
shift $(( $# >= 2 ? 2 : 1 ))
mkdir -p "$corpus/results"
for n in 10 20 30 40 60 80 100 130 160 200 0; do
  PYTHONPATH=$PWD python3 benchmarks/accuracy.py --corpus "$corpus" --tools "$tool" --subset "$n" \
      --no-docs "$@" > "$corpus/results/log-$tool-$n.md" 2>> "$corpus/results/log-$tool.err"
done
