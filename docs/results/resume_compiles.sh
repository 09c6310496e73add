#!/bin/sh
# How much a resumed jax-runner unit compiles: a run killed after 45 s (a
# checkpoint every second), then run again with the same compilation cache
# folder; counts JAX's compile log lines and cache loads in the second process.
# usage: sh docs/results/resume_compiles.sh LABEL
D=$(mktemp -d); C=$(mktemp -d)
cmd="python -m experiments.run_bsuite --runner=jax --agent=boot_dqn --bsuite_id=deep_sea/5 --seeds=0 --save_path=$D --num_episodes=3000 --progress_every=5 --checkpoint_seconds=1 --compilation_cache_dir=$C"
JAX_LOG_COMPILES=1 timeout -s KILL 45 $cmd > "$D/first.log" 2>&1
JAX_LOG_COMPILES=1 timeout -s KILL 90 $cmd > "$D/second.log" 2>&1
echo "$1: first process: $(grep -c 'Finished XLA compilation' "$D/first.log") compilations;" \
  "resumed: $(grep -c 'Finished XLA compilation' "$D/second.log") compilations," \
  "$(grep -c 'cache hit' "$D/second.log") cache loads," \
  "$(grep -o 'Finished XLA compilation of .* in [0-9.]* sec' "$D/second.log" | awk '{s+=$(NF-1)} END {printf "%.1f", s}') s compiling"
grep -m1 'resuming at' "$D/second.log"
rm -rf "$D" "$C"
