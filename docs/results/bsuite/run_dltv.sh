#!/bin/sh
# DLTV-QR's bsuite deep sea units at sizes 10-20 (deep_sea/0-5), seeds 0-2,
# budget 2,000, with Table 4's episode clock (alpha = 10^3 / N_episodes).
# Resumable: finished units are skipped. BSUITE_RESULTS (default
# docs/results/bsuite) is where they go.
RESULTS=${BSUITE_RESULTS:-docs/results/bsuite}
for i in 0 1 2 3 4 5; do
  python -m experiments.run_bsuite --runner=jax --agent=dltv_qr \
    --bsuite_id="deep_sea/$i" --seeds=0,1,2 --save_path="$RESULTS" \
    --num_episodes=2000 --progress_every=120 || exit 1
done
