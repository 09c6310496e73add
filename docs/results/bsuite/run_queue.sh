#!/bin/sh
# The queue behind docs/results/bsuite.
# Each (agent, id, seed) is a resumable unit: finished ones are skipped, so
# rerunning this continues where the last run stopped.
#   sh docs/results/bsuite/run_queue.sh AGENT[,AGENT...] EXPERIMENT FIRST LAST MAX_EPISODES [SEEDS]
# SEEDS defaults to 0,1,2 (sizes 40 and 50 use 0,1,2,3,4), trained
# in one program. APART=1 trains each seed in a program of its own (the
# same logs: seeds run one after another under lax.map either way), so a
# long unit is committed as soon as it finishes.
# e.g. sh docs/results/bsuite/run_queue.sh pe_dqn deep_sea 0 20 2000
#      APART=1 sh docs/results/bsuite/run_queue.sh pe_dqn_ind deep_sea 15 15 1000 0,1,2,3,4
AGENTS=$1; EXPERIMENT=$2; FIRST=$3; LAST=$4; BUDGET=$5; SEEDS=${6:-0,1,2}
if [ "${APART:-0}" = 1 ]; then RUNS=$(echo "$SEEDS" | tr ',' ' '); else RUNS=$SEEDS; fi
for i in $(seq "$FIRST" "$LAST"); do
  for agent in $(echo "$AGENTS" | tr ',' ' '); do
    for seeds in $RUNS; do
      python -m experiments.run_bsuite --runner=jax --agent="$agent" \
        --bsuite_id="$EXPERIMENT/$i" --seeds="$seeds" \
        --save_path=docs/results/bsuite --num_episodes="$BUDGET" \
        --progress_every=120 || exit 1
    done
  done
done
