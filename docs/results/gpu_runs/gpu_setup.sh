#!/bin/bash
# Installs the carried wheels (.whl/*.whl) into /tmp/site on a lent GPU,
# once per machine; a later call on the same warm machine skips it. Wheels
# under .whl/extra/ (the modules the loop below names) go in only when the
# image cannot import the module itself, so they never shadow the image's
# own build. Then imports experiments.run_bsuite in full; exits non-zero
# if anything is missing.
#   bash docs/results/gpu_runs/gpu_setup.sh   (gpu_units.sh runs it first)
SITE=${SITE:-/tmp/site}
OUT=${OUT:-/tmp/gpuout}; mkdir -p "$OUT"
if [ ! -f "$SITE/.installed" ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$SITE" .whl/*.whl || exit 3
  touch "$SITE/.installed"
  nvidia-smi -L 2>&1 | tee -a "$OUT/log.txt"
fi
for pair in pandas:pandas filelock:filelock dateutil:python_dateutil six:six decorator:decorator cloudpickle:cloudpickle gast:gast \
    immutabledict:immutabledict termcolor:termcolor lazy_loader:lazy_loader skimage:scikit_image frozendict:frozendict; do
  mod=${pair%%:*}; whl=${pair#*:}
  if ! PYTHONPATH=$SITE python3 -c "import $mod" 2>/dev/null; then
    echo "image lacks $mod: installing the carried wheel" | tee -a "$OUT/log.txt"
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target "$SITE" .whl/extra/${whl}-*.whl || exit 3
  fi
done
PYTHONPATH=$SITE:$PWD python3 -c "import jax, flax, optax, chex, rlax, bsuite, pandas, filelock; from experiments.lib import bsuite_jax, run_bsuite; print('versions', jax.__version__, flax.__version__, optax.__version__, pandas.__version__, jax.devices())" 2>&1 | grep -v "^W\|^I0\|^I1" | tee -a "$OUT/log.txt"
exit "${PIPESTATUS[0]}"
