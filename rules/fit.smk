# CPU classifiers. MLP fits use the GPU-tagged copy `fit_mlp` below, so that cluster profiles can
# map them onto GPU partitions by rule name.
rule fit:
    input:
        unpack(get_fit_inputs),
    output:
        predictions=chunk_paths("predictions", None),
        runs=chunk_paths("runs", None),
    log:
        f"{RESULTS}/logs/fit/{{dataset}}/{{classifier}}/{{chunk}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/fit/{{dataset}}/{{classifier}}/{{chunk}}.tsv"
    wildcard_constraints:
        classifier="lr-sgd|svm-sgd|xgb",
    conda:
        "../envs/fit.yaml"
    threads: threads_of("fit")
    resources:
        **resources_of("fit"),
    params:
        cells=get_chunk_cells,
        repeats=[str(int(r)) for r in REPEATS],
        n_runs=config["split"]["runs"],
        test_fraction=config["split"].get("test_fraction", 0.25),
        root_seed=config["root_seed"],
        hparams=get_hparams_arg,
        settings=get_classifier_settings,
        warn_changed_below=config["perturbation"].get("warn_changed_below", 0.5),
        manifest=manifest_path("fit", "dataset", "classifier", "chunk"),
        code=CODE["fit"],
    shell:
        modelvar_job(
            "fit --data {input.data:q} --meta {input.meta:q} --classifier "
            "{wildcards.classifier:q} --cells {params.cells:q} --repeats {params.repeats:q} "
            "--runs {params.n_runs:q} --test-fraction {params.test_fraction:q} --root-seed "
            "{params.root_seed:q} --threads {threads} {params.hparams:q} --settings "
            "{params.settings:q} --predictions {output.predictions:q} --runs-out "
            "{output.runs:q} --manifest {params.manifest:q} --warn-changed-below "
            "{params.warn_changed_below:q} 2> {log:q}",
            blas_threads=True,
        )


# MLP fits are GPU-tagged: the local profile runs them one at a time, the SLURM profile asks for a
# GPU; without one the fit code falls back to the CPU. Resources from `resources.fit_mlp`.
use rule fit as fit_mlp with:
    wildcard_constraints:
        classifier="mlp",
    conda:
        "../envs/mlp.yaml"
    threads: threads_of("fit_mlp")
    resources:
        **resources_of("fit_mlp", gpu=1),


rule tune:
    input:
        unpack(get_dataset_files),
    output:
        trials=f"{RESULTS}/tuning/{{dataset}}/{{classifier}}/trials.parquet",
        best=f"{RESULTS}/tuning/{{dataset}}/{{classifier}}/best.json",
    log:
        f"{RESULTS}/logs/tune/{{dataset}}/{{classifier}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/tune/{{dataset}}/{{classifier}}.tsv"
    conda:
        "../envs/tune.yaml"
    threads: threads_of("tune")
    resources:
        **resources_of("tune", gpu=lambda wildcards: int(wildcards.classifier == "mlp")),
    params:
        trials=config["tuning"]["trials"],
        folds=config["tuning"]["folds"],
        test_fraction=config["split"].get("test_fraction", 0.25),
        root_seed=config["root_seed"],
        manifest=manifest_path("tune", "dataset", "classifier"),
        code=CODE["tune"],
    shell:
        modelvar_job(
            "tune --data {input.data:q} --meta {input.meta:q} --classifier "
            "{wildcards.classifier:q} --trials {params.trials:q} --folds {params.folds:q} "
            "--test-fraction {params.test_fraction:q} --root-seed {params.root_seed:q} "
            "--threads {threads} --trials-out {output.trials:q} --best-out {output.best:q} "
            "--manifest {params.manifest:q} 2> {log:q}",
            blas_threads=True,
        )
