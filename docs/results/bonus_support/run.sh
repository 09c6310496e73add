#!/bin/sh
# Choosing PE-DQN's bonus scale.
# Chosen on seeds 10+ so that the reported units (seeds 0-4) stay untouched.
#   sh docs/results/bonus_support/run.sh NAME BSUITE_ID SEEDS BUDGET [--flag=value ...]
# e.g. sh docs/results/bonus_support/run.sh v_max_0.4 deep_sea/10 10,11,12 1200 --bonus_v_max=0.4
NAME=$1; ID=$2; SEEDS=$3; BUDGET=$4; shift 4
exec python -m experiments.run_bsuite --runner=jax --agent=pe_dqn \
  --bsuite_id="$ID" --seeds="$SEEDS" \
  --save_path="docs/results/bonus_support/$NAME" --num_episodes="$BUDGET" \
  --progress_every=120 "$@"
