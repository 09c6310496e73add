#!/bin/sh
# The PE-DQN arms of the paper-settings comparison on deep sea (seeds 10-19
# choose, 0-4 report). Each (arm, id, seed) is a resumable unit under
# docs/results/paper_presets/ARM/pe_dqn/seed_K/: finished ones are skipped.
#   sh docs/results/paper_presets/run_arm.sh ARM BSUITE_ID SEEDS [BUDGET]
# ARM is one of:
#   prior20     today's default with the quantile prior at Table 4's 20
#   beta_decay  today's default with beta 5 -> 0 over 3,334 episodes (B.2)
#   both        the two changes together
#   paper       --preset=paper (every stated Table 4 / B.2 setting)
# RESULTS (default docs/results/paper_presets) is where the arms' folders go.
# e.g. sh docs/results/paper_presets/run_arm.sh prior20 deep_sea/15 10,11,12
ARM=$1; ID=$2; SEEDS=$3; BUDGET=${4:-2000}
RESULTS=${RESULTS:-docs/results/paper_presets}
case "$ARM" in
  prior20) FLAGS="--quantile_prior_scale=20" ;;
  beta_decay) FLAGS="--beta_final=0 --beta_decay_episodes=3334" ;;
  both) FLAGS="--quantile_prior_scale=20 --beta_final=0 --beta_decay_episodes=3334" ;;
  paper) FLAGS="--preset=paper" ;;
  *) echo "run_arm.sh: unknown ARM '$ARM' (prior20, beta_decay, both, paper)" >&2; exit 2 ;;
esac
for seed in $(echo "$SEEDS" | tr ',' ' '); do
  python -m experiments.run_bsuite --runner=jax --agent=pe_dqn \
    --bsuite_id="$ID" --seeds="$seed" $FLAGS \
    --save_path="$RESULTS/$ARM" --num_episodes="$BUDGET" \
    --progress_every=120 || exit 1
done
