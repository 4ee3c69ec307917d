# The metric simulation study (seeds 000 and 002): no classifier is fitted. Joins `rule all` when
# `simulation.enabled` is true.


rule simulate_metrics:
    input:
        recipe=recipe_of("simulate_metrics"),
    output:
        table=f"{RESULTS}/simulation/metrics/classes-{{n_classes}}.parquet",
        manifest=manifest_path("simulate_metrics"),
    log:
        log_of("simulate_metrics"),
    conda:
        "../envs/metrics.yaml"
    threads: threads_of("simulate_metrics")
    resources:
        **resources_of("simulate_metrics"),
    params:
        root_seed=config["root_seed"],
        distributions=SIMULATION["distributions"],
        replicates=SIMULATION["replicates"],
        n_samples=SIMULATION["n_samples"],
        runs=SIMULATION["runs"],
        code=code_of("simulate_metrics"),
    shell:
        modelvar_job(
            "simulate --root-seed {params.root_seed:q} --n-classes {wildcards.n_classes:q} "
            "--distributions {params.distributions:q} --replicates {params.replicates:q} "
            "--n-samples {params.n_samples:q} --runs {params.runs:q} --out {output.table:q} "
            "--manifest {output.manifest:q} 2> {log:q}",
        )


rule evaluate_simulation:
    input:
        sims=[
            f"{RESULTS}/simulation/metrics/classes-{c}.parquet"
            for c in SIMULATION["n_classes"]
        ],
        recipe=recipe_of("evaluate_simulation"),
    output:
        **{
            f"{fig}_png": report(
                f"{RESULTS}/simulation/metrics/{fig}.png",
                caption=f"../workflow/report/simulation_{fig}.rst",
                category=SIMULATION_CATEGORY,
                subcategory="Reproducibility metrics (seed 000)",
            )
            for fig in SIMULATION_FIGURES["evaluate_simulation"]
        },
        **{
            f"{fig}_{ext}": f"{RESULTS}/simulation/metrics/{fig}.{ext}"
            for fig in SIMULATION_FIGURES["evaluate_simulation"]
            for ext in FIGURE_FORMATS[1:]
        },
        simulations=f"{RESULTS}/simulation/metrics/simulations.parquet",
        criteria=f"{RESULTS}/simulation/metrics/criteria.parquet",
        ranking=f"{RESULTS}/simulation/metrics/ranking.parquet",
        html=report(
            f"{RESULTS}/simulation/metrics/ranking.html",
            caption="../workflow/report/simulation_ranking.rst",
            category=SIMULATION_CATEGORY,
            subcategory="Reproducibility metrics (seed 000)",
        ),
        manifest=manifest_path("evaluate_simulation"),
    log:
        log_of("evaluate_simulation"),
    conda:
        "../envs/plots.yaml"
    threads: threads_of("evaluate_simulation")
    resources:
        **resources_of("evaluate_simulation"),
    params:
        out_dir=with_known_signature(
            lambda wildcards, output: Path(output.simulations).parent
        ),
        width=config["figures"]["width"],
        code=code_of("evaluate_simulation"),
    shell:
        modelvar_job(
            "evaluate-simulation --sims {input.sims:q} --out-dir {params.out_dir:q} --manifest "
            "{output.manifest:q} --width {params.width:q} 2> {log:q}",
        )


rule dirichlet_simulation:
    input:
        recipe=recipe_of("dirichlet_simulation"),
    output:
        **{
            f"{fig}_png": report(
                f"{RESULTS}/simulation/dirichlet/{fig}.png",
                caption=f"../workflow/report/dirichlet_{fig}.rst",
                category=SIMULATION_CATEGORY,
                subcategory="Entropy and confusion index (seed 002)",
            )
            for fig in SIMULATION_FIGURES["dirichlet_simulation"]
        },
        **{
            f"{fig}_{ext}": f"{RESULTS}/simulation/dirichlet/{fig}.{ext}"
            for fig in SIMULATION_FIGURES["dirichlet_simulation"]
            for ext in FIGURE_FORMATS[1:]
        },
        per_sample=f"{RESULTS}/simulation/dirichlet/per_sample.parquet",
        spearman=f"{RESULTS}/simulation/dirichlet/spearman.parquet",
        html=report(
            f"{RESULTS}/simulation/dirichlet/spearman.html",
            caption="../workflow/report/dirichlet_spearman.rst",
            category=SIMULATION_CATEGORY,
            subcategory="Entropy and confusion index (seed 002)",
        ),
        manifest=manifest_path("dirichlet_simulation"),
    log:
        log_of("dirichlet_simulation"),
    conda:
        "../envs/plots.yaml"
    threads: threads_of("dirichlet_simulation")
    resources:
        **resources_of("dirichlet_simulation"),
    params:
        root_seed=config["root_seed"],
        n=SIMULATION["dirichlet"]["n"],
        cases=json.dumps(get_dirichlet_cases()),
        out_dir=with_known_signature(
            lambda wildcards, output: Path(output.per_sample).parent
        ),
        width=config["figures"]["width"],
        code=code_of("dirichlet_simulation"),
    shell:
        modelvar_job(
            "dirichlet --root-seed {params.root_seed:q} --n {params.n:q} --cases "
            "{params.cases:q} --out-dir {params.out_dir:q} --manifest {output.manifest:q} "
            "--width {params.width:q} 2> {log:q}",
        )
