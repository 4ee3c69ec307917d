# Probe fits of a classifier on a dataset that arrives in a job (OpenML), after its prepare job:
# their measurement sets the limits of that dataset x classifier's fit jobs, which read it
# (modelvar.planning.probe_jobs). The plan says which (PLAN.probe_jobs).
rule probe_data:
    input:
        unpack(get_dataset_files),
        recipe=recipe_of("probe_data"),
    output:
        probe=probe_file("{dataset}", "{classifier}"),
        manifest=manifest_path("probe_data"),
    log:
        log_of("probe_data"),
    wildcard_constraints:
        classifier=registry.wildcard(gpu=False, among=CLASSIFIERS, settings=SETTINGS),
    conda:
        "../envs/fit.yaml"
    threads: threads_of("probe_data")
    resources:
        **resources_of("probe_data", probe_job),
    params:
        share=PLAN.probe_share,
        test_fraction=config["split"]["test_fraction"],
        root_seed=config["root_seed"],
        cost_model=get_cost_model_arg,
        code=code_of("probe_data"),
    shell:
        modelvar_job(
            "probe-data --data {input.data:q} --meta {input.meta:q} --classifier "
            "{wildcards.classifier:q} --share {params.share:q} --test-fraction "
            "{params.test_fraction:q} --root-seed {params.root_seed:q} --threads {threads} "
            "{params.cost_model:q} --out {output.probe:q} --manifest {output.manifest:q} 2> "
            "{log:q}",
        )


# One fit job = the cells, repeats and runs that the plan (modelvar.planning.plan) gives it: one
# predictions file and one runs table. CPU classifiers here; GPU-tagged classifiers' fits (the
# MLP's: its spec says `gpu`; xgb's where the config's classifier_settings say so) use the copy
# `fit_mlp` below, so that cluster profiles can map them onto GPU partitions by rule name.
rule fit:
    input:
        unpack(get_fit_inputs),
        recipe=recipe_of("fit"),
    output:
        predictions=predictions_file("{dataset}", "{classifier}", "{job}"),
        runs=table_file("runs", "{dataset}", "{classifier}", "{job}"),
        manifest=manifest_path("fit"),
    log:
        log_of("fit"),
    benchmark:
        f"{RESULTS}/benchmarks/fit/{{dataset}}/{{classifier}}/{{job}}.tsv"
    wildcard_constraints:
        classifier=registry.wildcard(gpu=False, among=CLASSIFIERS, settings=SETTINGS),
    conda:
        "../envs/fit.yaml"
    threads: threads_of("fit")
    resources:
        **resources_of("fit", fit_job),
    params:
        job=get_fit_job_args,
        n_runs=config["split"]["runs"],
        test_fraction=config["split"]["test_fraction"],
        root_seed=config["root_seed"],
        hparams=get_hparams_arg,
        settings=get_classifier_settings,
        code=code_of("fit"),
    shell:
        modelvar_job(
            "fit --data {input.data:q} --meta {input.meta:q} --classifier "
            "{wildcards.classifier:q} {params.job:q} --runs {params.n_runs:q} "
            "--test-fraction {params.test_fraction:q} --root-seed {params.root_seed:q} "
            "--threads {threads} {params.hparams:q} --settings {params.settings:q} "
            "--predictions {output.predictions:q} --runs-out {output.runs:q} --manifest "
            "{output.manifest:q} 2> "
            "{log:q}",
        )


# GPU-tagged fits (the MLP's, and xgb's where a study puts it on a GPU): the local profile runs
# them one at a time, the SLURM profile asks for a GPU; without one the fit code falls back to
# the CPU. Resources from `resources.fit_mlp`.
use rule fit as fit_mlp with:
    output:
        predictions=predictions_file("{dataset}", "{classifier}", "{job}"),
        runs=table_file("runs", "{dataset}", "{classifier}", "{job}"),
        manifest=manifest_path("fit_mlp"),
    log:
        log_of("fit_mlp"),
    benchmark:
        f"{RESULTS}/benchmarks/fit_mlp/{{dataset}}/{{classifier}}/{{job}}.tsv"
    wildcard_constraints:
        classifier=registry.wildcard(gpu=True, among=CLASSIFIERS, settings=SETTINGS),
    conda:
        "../envs/mlp.yaml"
    threads: threads_of("fit_mlp")
    resources:
        **resources_of("fit_mlp", fit_job, gpu=1),


rule tune:
    input:
        unpack(get_dataset_files),
        recipe=recipe_of("tune"),
    output:
        trials=f"{RESULTS}/tuning/{{dataset}}/{{classifier}}/trials.parquet",
        best=f"{RESULTS}/tuning/{{dataset}}/{{classifier}}/best.json",
        manifest=manifest_path("tune"),
    log:
        log_of("tune"),
    benchmark:
        f"{RESULTS}/benchmarks/tune/{{dataset}}/{{classifier}}.tsv"
    wildcard_constraints:
        classifier=registry.wildcard(gpu=False, among=CLASSIFIERS, settings=SETTINGS),
    conda:
        "../envs/tune.yaml"
    threads: threads_of("tune")
    resources:
        **resources_of("tune"),
    params:
        trials=config["tuning"]["trials"],
        folds=config["tuning"]["folds"],
        test_fraction=config["split"]["test_fraction"],
        root_seed=config["root_seed"],
        settings=get_tune_settings,
        code=code_of("tune"),
    shell:
        modelvar_job(
            "tune --data {input.data:q} --meta {input.meta:q} --classifier "
            "{wildcards.classifier:q} --settings {params.settings:q} "
            "--trials {params.trials:q} --folds {params.folds:q} "
            "--test-fraction {params.test_fraction:q} --root-seed {params.root_seed:q} "
            "--threads {threads} --trials-out {output.trials:q} --best-out {output.best:q} "
            "--manifest {output.manifest:q} 2> {log:q}",
        )


# Tuning of the classifiers whose fits run on a GPU (as fit_mlp for their fits), so that a
# profile can send them to a GPU partition by rule name. Resources from `resources.tune_gpu`.
use rule tune as tune_gpu with:
    output:
        trials=f"{RESULTS}/tuning/{{dataset}}/{{classifier}}/trials.parquet",
        best=f"{RESULTS}/tuning/{{dataset}}/{{classifier}}/best.json",
        manifest=manifest_path("tune_gpu"),
    log:
        log_of("tune_gpu"),
    benchmark:
        f"{RESULTS}/benchmarks/tune_gpu/{{dataset}}/{{classifier}}.tsv"
    wildcard_constraints:
        classifier=registry.wildcard(gpu=True, among=CLASSIFIERS, settings=SETTINGS),
    threads: threads_of("tune_gpu")
    resources:
        **resources_of("tune_gpu", gpu=1),
