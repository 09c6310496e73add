#!/bin/bash
# GPU checks (one call). Parts are capped so each leaves the next its time.
# SMALL=1 runs a tiny version on CPU to check the script.
export PYTHONUNBUFFERED=1 XLA_PYTHON_CLIENT_PREALLOCATE=false PE_JAX_COMPILATION_CACHE=/tmp/xla
export OUT=${OUT:-/tmp/gpuout}; mkdir -p $OUT
if [ "${SMALL:-0}" = 1 ]; then
  SZ=10; SZB=10; SEEDS=2; PROBE=100; EP=20; TA=120; TB=100; VZ="--num_envs=2 --batch_size=8 --env_steps=40 --train_steps=1 --replay_frames=1000 --train_replay_frames=2000"; TC=200
else
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 3
  export PYTHONPATH=/tmp/site:$PWD
  nvidia-smi -L | tee -a $OUT/log.txt
  SZ=10,50,100; SZB=50,100; SEEDS=10; PROBE=1000; EP=0; TA=180; TB=170; VZ="--num_envs=32 --batch_size=512 --env_steps=4000 --train_steps=30"; TC=110
fi
python3 -c "import jax, flax, optax, chex, rlax, bsuite; print('versions', jax.__version__, flax.__version__, optax.__version__, jax.devices())" 2>&1 | tee -a $OUT/log.txt || exit 4
t0=$(date +%s)
# A: projected wall time at paper scale (10 seeds, 10,000 episodes).
timeout $TA python3 -m experiments.paper.project_scaling --agents=pe_dqn --sizes=$SZ --seeds=$SEEDS --num_episodes=10000 --probe_steps=$PROBE --batching=vmap --save_path=$OUT/proj 2>&1 | grep -v "^W\|^I0\|^I1" | tee -a $OUT/log.txt
timeout 80 python3 -m experiments.paper.project_scaling --agents=boot_dqn --sizes=$SZB --seeds=$SEEDS --num_episodes=10000 --probe_steps=$PROBE --batching=vmap --save_path=$OUT/projb 2>&1 | grep -v "^W\|^I0\|^I1" | tee -a $OUT/log.txt
echo "A took $(( $(date +%s) - t0 )) s" | tee -a $OUT/log.txt
# B: Fig. 4b protocol at size 50, PE-DQN and BDQN+P, 5 seeds, the episodes that fit ~70 s per group.
if [ "$EP" = 0 ]; then
  EP=$(python3 - <<'PY'
import csv, os
rows = [r for r in csv.DictReader(open(os.environ['OUT'] + '/proj/project_scaling.csv')) if r['size'] == '50']
sps = float(rows[0]['env_steps_per_second']) / int(rows[0]['seeds']) if rows else 20.0
print(max(100, min(3000, int(70 * sps / 50) // 100 * 100)))
PY
) || EP=300
fi
echo "B: $EP episodes" | tee -a $OUT/log.txt
timeout $TB python3 -m experiments.paper.deep_sea_scaling --runner=jax --batching=vmap --agents=pe_dqn,boot_dqn --sizes=50 --seeds=5 --num_episodes=$EP --episodes_per_call=100 --progress_every=10 --save_path=$OUT/fig4b 2>&1 | grep -v "^W\|^I0\|^I1" | tee -a $OUT/log.txt
rm -rf $OUT/fig4b/checkpoints $OUT/fig4b/logs $OUT/fig4b/deep_sea_scaling.csv
echo "B done at $(( $(date +%s) - t0 )) s" | tee -a $OUT/log.txt
# C: VizDoom MyWayHome throughput at Table 5 size.
timeout $TC python3 -m experiments.benchmarks.benchmark_vizdoom $VZ 2>&1 | grep -v "^W\|^I0\|^I1" | tee -a $OUT/log.txt
echo "all done at $(( $(date +%s) - t0 )) s"
ls -R $OUT
