"""What the experiment commands share: results and unit records, checkpoints,
the compilation cache, parallel backends, hyperparameter flags, the deep sea
group trainer, the jitted bsuite runner and deep sea scores. It imports no
command."""
