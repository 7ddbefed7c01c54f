#!/usr/bin/env bash
# Regenerates the figures and tables of docs/validation.md: runs the sweep of every study in
# docs/validation/studies/ (resumable: run it again after an interruption and finished runs
# are kept), then turns the sweeps into docs/validation/<study>.png and results.md.
#
#   docs/validation/regenerate.sh [SWEEPS_DIR]     (default out/validation)
#
# On 2 cores the whole set takes about four hours (the 3 000-grain piles of
# repose_scale, repose_scale_dt and repose_scale_periodic some 75 minutes of it).
set -euo pipefail
cd "$(dirname "$0")/../.."
out="${1:-out/validation}"
cargo build --release -p talus-cli
for study in docs/validation/studies/*.ron; do
    name="$(basename "$study" .ron)"
    status=0
    target/release/talus sweep "$study" --out "$out/$name" --quiet || status=$?
    # 3: every run ended, some are suspect (their warnings are in sweep.csv): still answers.
    if [ "$status" -ne 0 ] && [ "$status" -ne 3 ]; then
        echo "the sweep of $name failed (exit $status)" >&2
        exit "$status"
    fi
done
cargo run --release --example validation_report -- "$out" docs/validation
