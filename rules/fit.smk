# CPU classifiers. MLP fits use the GPU-tagged copy `fit_mlp` below, so that cluster profiles can
# map them onto GPU partitions by rule name.
rule fit:
    wildcard_constraints:
        classifier="lr-sgd|svm-sgd|xgb",
    input:
        unpack(get_fit_inputs),
    output:
        predictions=chunk_paths("predictions", None),
        runs=chunk_paths("runs", None),
    params:
        cells=get_chunk_cells,
        repeats=" ".join(str(int(r)) for r in REPEATS),
        n_runs=config["split"]["runs"],
        test_fraction=config["split"].get("test_fraction", 0.25),
        root_seed=config["root_seed"],
        hparams=get_hparams_arg,
        settings=get_classifier_settings,
        code=CODE["fit"],
    log:
        f"{RESULTS}/logs/fit/{{dataset}}/{{classifier}}/{{chunk}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/fit/{{dataset}}/{{classifier}}/{{chunk}}.tsv"
    threads: resource("fit", "threads", 1)
    resources:
        mem_mb=resource("fit", "mem_mb", 2000),
        runtime=resource("fit", "runtime", 120),
    conda:
        "../envs/modelvar.yaml"
    shell:
        "OMP_NUM_THREADS={threads} OPENBLAS_NUM_THREADS={threads} "
        "python -m modelvar fit --data {input.data} --meta {input.meta} "
        "--classifier {wildcards.classifier} --cells {params.cells} "
        "--repeats {params.repeats} --runs {params.n_runs} "
        "--test-fraction {params.test_fraction} --root-seed {params.root_seed} "
        "--threads {threads} {params.hparams} --settings '{params.settings}' "
        "--predictions {output.predictions} --runs-out {output.runs} 2> {log}"


# MLP fits are GPU-tagged: the local profile runs them one at a time, the SLURM profile asks for a
# GPU; without one the fit code falls back to the CPU. Resources from `resources.fit_mlp`.
use rule fit as fit_mlp with:
    wildcard_constraints:
        classifier="mlp",
    threads: resource("fit_mlp", "threads", resource("fit", "threads", 1))
    resources:
        mem_mb=resource("fit_mlp", "mem_mb", resource("fit", "mem_mb", 4000)),
        runtime=resource("fit_mlp", "runtime", resource("fit", "runtime", 240)),
        gpu=1,


rule tune:
    input:
        unpack(get_dataset_files),
    output:
        trials=f"{RESULTS}/tuning/{{dataset}}/{{classifier}}/trials.parquet",
        best=f"{RESULTS}/tuning/{{dataset}}/{{classifier}}/best.json",
    params:
        trials=config["tuning"]["trials"],
        folds=config["tuning"]["folds"],
        test_fraction=config["split"].get("test_fraction", 0.25),
        root_seed=config["root_seed"],
        code=CODE["tune"],
    log:
        f"{RESULTS}/logs/tune/{{dataset}}/{{classifier}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/tune/{{dataset}}/{{classifier}}.tsv"
    threads: resource("tune", "threads", 1)
    resources:
        mem_mb=resource("tune", "mem_mb", 2000),
        runtime=resource("tune", "runtime", 240),
        gpu=lambda wildcards: 1 if wildcards.classifier == "mlp" else 0,
    conda:
        "../envs/modelvar.yaml"
    shell:
        "OMP_NUM_THREADS={threads} OPENBLAS_NUM_THREADS={threads} "
        "python -m modelvar tune --data {input.data} --meta {input.meta} "
        "--classifier {wildcards.classifier} --trials {params.trials} --folds {params.folds} "
        "--test-fraction {params.test_fraction} --root-seed {params.root_seed} "
        "--threads {threads} --trials-out {output.trials} --best-out {output.best} 2> {log}"
