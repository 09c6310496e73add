#!/bin/bash
# bsuite units on a lent GPU, one device call. Each line of UNITS is
#   AGENT BSUITE_ID SEEDS BUDGET TIMEOUT_S [FOLDER [--flag=value ...]]
# BSUITE_ID is an id or an experiment's name (all its ids: the whole-suite
# units); BUDGET is episodes per seed, or - for bsuite's episode count.
# FOLDER (default bsuite) is where the units go under docs/results/: a run
# with flags needs a folder of its own (e.g. bonus_support/prior_n), as a
# unit's identity includes its overrides. The seeds of a line train as one
# vmapped program and write bsuite's CSVs and unit records (device
# recorded); everything comes back as one tar file (the device returns
# files at most three folders deep).
# A seed whose unit is committed under docs/results/FOLDER in the carried
# tree is skipped by run_bsuite (copied into the scratch folder first), or
# continued where its budget is smaller than the line's; --overwrite redoes.
# Back here: tar xzf FILES_AT/units.tgz -C docs/results/ (finished units
# only; the tables mark GPU units with '*').
#   bash docs/results/gpu_runs/gpu_units.sh            # on the device
#   SMALL=1 bash docs/results/gpu_runs/gpu_units.sh    # tiny check on CPU
# Several units at once share the GPU (each step is launch-bound, so the
# GPU idles between one program's small kernels; four PE-DQN streams gave
# ~600 env steps/s each against ~1,300 alone on an H200): STREAMS=1 reads UNITS
# as groups separated by '|' and runs the groups side by side, each group's
# lines one after another; DEADLINE (seconds from the start) caps every
# line's limit so that the tars are written before the call's own limit.
export PYTHONUNBUFFERED=1 XLA_PYTHON_CLIENT_PREALLOCATE=false PE_JAX_COMPILATION_CACHE=/tmp/xla
export OUT=${OUT:-/tmp/gpuout}; mkdir -p $OUT/units
if [ "${SMALL:-0}" = 1 ]; then
  UNITS=${UNITS:-"pe_dqn deep_sea/0 0,1 20 200
boot_dqn deep_sea/1 0,1 20 200 bonus_support/small --hidden_sizes=8 --num_ensemble=2"}
  EPC=10
else
  # wheels into /tmp/site once per machine, then an import check
  [ -n "${INSTALLED:-}" ] || bash docs/results/gpu_runs/gpu_setup.sh || exit 3
  export PYTHONPATH=/tmp/site:$PWD
  # ~2.3 ms per vmapped PE-DQN step (H200): size N, budget E: N E 2.3 ms.
  # Default: PE-DQN units at sizes 42 and 44 (193 s and 202 s
  # estimated), limits with room for compilation; run with timeout_s=590.
  UNITS=${UNITS:-"pe_dqn deep_sea/16 0,1,2 2000 250
pe_dqn deep_sea/17 0,1,2 2000 260"}
  EPC=250
fi
t0=${T0:-$(date +%s)}
if [ "${STREAMS:-0}" = 1 ]; then
  n=0
  # the wait sits inside the pipeline's subshell, where the groups run
  echo "$UNITS" | tr '|' '\n' | { while read -r group; do
    n=$((n + 1))
    [ -z "$group" ] && continue
    UNITS=$(echo "$group" | tr ';' '\n') TAG=_$n STREAMS=0 T0=$t0 INSTALLED=1 bash "$0" &
  done; wait; }
  # one tar and one log (the device returns at most 8 files)
  mkdir -p $OUT/all
  for f in $OUT/units_*.tgz; do tar xzf "$f" -C $OUT/all && rm "$f"; done
  tar czf $OUT/units.tgz -C $OUT/all . && rm -rf $OUT/all $OUT/units
  cat $OUT/log_*.txt >> $OUT/log.txt && rm $OUT/log_*.txt
  tar tzf $OUT/units.tgz | grep -c "json$"
  exit 0
fi
TAG=${TAG:-}
echo "$UNITS" | while read -r agent id seeds budget limit folder flags; do
  [ -z "$agent" ] && continue
  # The line's committed units go into the empty scratch folder first, so
  # that run_bsuite's own check skips them as on the CPU (the same run and
  # config, its budget reached), refuses a stale one, and --overwrite redoes.
  case "$id" in
    */*) pattern=bsuite_id_-_$(echo "$id" | tr '/' '-').csv ;;
    *) pattern="bsuite_id_-_$(echo "$id" | tr 'A-Z' 'a-z')-[0-9]*.csv" ;;
  esac
  for s in $(echo "$seeds" | tr ',' ' '); do
    src=docs/results/${folder:-bsuite}/$agent/seed_$s
    dst=$OUT/units$TAG/${folder:-bsuite}/$agent/seed_$s
    for log in $src/$pattern; do
      if [ -f "$log.json" ] && [ -f "$log" ]; then
        mkdir -p "$dst" && cp "$log" "$log.json" "$dst/"
      fi
    done
  done
  budget_flag=--num_episodes=$budget
  [ "$budget" = - ] && budget_flag=
  if [ -n "${DEADLINE:-}" ]; then
    left=$(( DEADLINE - ($(date +%s) - t0) ))
    [ "$left" -lt "$limit" ] && limit=$left
    [ "$limit" -le 0 ] && { echo "$agent $id skipped: deadline" | tee -a $OUT/log$TAG.txt; continue; }
  fi
  # shellcheck disable=SC2086  # flags split into words on purpose
  timeout "$limit" python3 -m experiments.run_bsuite --runner=jax --agent="$agent" \
    --bsuite_id="$id" --seeds="$seeds" $budget_flag \
    --episodes_per_call=$EPC --progress_every=30 --checkpoint_seconds=100000 \
    --save_path="$OUT/units$TAG/${folder:-bsuite}" $flags 2>&1 | grep -v "^W\|^I0\|^I1" | tee -a $OUT/log$TAG.txt
  echo "$agent $id ${folder:-bsuite} $flags done at $(( $(date +%s) - t0 )) s" | tee -a $OUT/log$TAG.txt
done
mkdir -p $OUT/units$TAG
tar czf $OUT/units$TAG.tgz --exclude=.checkpoints -C $OUT/units$TAG . && rm -rf $OUT/units$TAG
tar tzf $OUT/units$TAG.tgz | grep -c "json$"
