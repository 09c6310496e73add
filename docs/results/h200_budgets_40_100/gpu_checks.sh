#!/bin/bash
# GPU checks of one H200 run (one call).
# A: PE-DQN's defaults at deep_sea/15 (size 40), seeds 0-9, a longer budget
#    than the 2-core units: slow, or stuck?
# B: the 0.05 N quantile prior (2.5) at deep_sea/20 (size 50), seeds 10-19
#    (never reported): does the wall at 50 hold on ten seeds?
# bsuite's protocol (run_bsuite --runner=jax, bsuite CSVs); every seed runs
# to its budget (--nostop_when_solved: one program, no recompiles when seeds
# finish; the records still say where bsuite's rule calls it solved).
# SMALL=1 runs a tiny version on CPU to check the script.
export PYTHONUNBUFFERED=1 XLA_PYTHON_CLIENT_PREALLOCATE=false PE_JAX_COMPILATION_CACHE=/tmp/xla
export OUT=${OUT:-/tmp/gpuout}; mkdir -p $OUT
if [ "${SMALL:-0}" = 1 ]; then
  IDA=deep_sea/0; IDB=deep_sea/0; EA=20; EB=20; TA=200; TB=200; SA=0,1; SB=10,11; EPC=10
else
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 3
  export PYTHONPATH=/tmp/site:$PWD
  nvidia-smi -L | tee -a $OUT/log.txt
  IDA=deep_sea/15; IDB=deep_sea/20; EA=2500; EB=2000; TA=275; TB=255
  SA=0,1,2,3,4,5,6,7,8,9; SB=10,11,12,13,14,15,16,17,18,19; EPC=250
fi
python3 -c "import jax, flax, optax, chex, rlax, bsuite; print('versions', jax.__version__, flax.__version__, optax.__version__, jax.devices())" 2>&1 | tee -a $OUT/log.txt || exit 4
t0=$(date +%s)
timeout $TA python3 -m experiments.run_bsuite --runner=jax --agent=pe_dqn --bsuite_id=$IDA \
  --seeds=$SA --num_episodes=$EA --nostop_when_solved --episodes_per_call=$EPC \
  --progress_every=20 --checkpoint_seconds=100000 --save_path=$OUT/default 2>&1 | grep -v "^W\|^I0\|^I1" | tee -a $OUT/log.txt
echo "A done at $(( $(date +%s) - t0 )) s" | tee -a $OUT/log.txt
timeout $TB python3 -m experiments.run_bsuite --runner=jax --agent=pe_dqn --bsuite_id=$IDB \
  --seeds=$SB --num_episodes=$EB --nostop_when_solved --episodes_per_call=$EPC \
  --quantile_prior_scale=2.5 \
  --progress_every=20 --checkpoint_seconds=100000 --save_path=$OUT/prior_n 2>&1 | grep -v "^W\|^I0\|^I1" | tee -a $OUT/log.txt
echo "B done at $(( $(date +%s) - t0 )) s" | tee -a $OUT/log.txt
find $OUT -name "checkpoints" -type d -prune -exec rm -rf {} + 2>/dev/null
ls -R $OUT | head -60
