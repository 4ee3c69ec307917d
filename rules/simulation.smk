# The metric simulation study (seeds 000 and 002): no classifier is fitted. Joins `rule all` when
# `simulation.enabled` is true.


rule simulate_metrics:
    output:
        f"{RESULTS}/simulation/metrics/classes-{{n_classes}}.parquet",
    params:
        root_seed=config["root_seed"],
        distributions=" ".join(SIMULATION.get("distributions", SIM_DISTRIBUTIONS)),
        replicates=SIMULATION.get("replicates", 20),
        n_samples=SIMULATION.get("n_samples", 500),
        runs=SIMULATION.get("runs", 10),
        code=CODE["simulate"],
    log:
        f"{RESULTS}/logs/simulate_metrics/classes-{{n_classes}}.log",
    threads: resource("simulate", "threads", 1)
    resources:
        mem_mb=resource("simulate", "mem_mb", 2000),
        runtime=resource("simulate", "runtime", 30),
    conda:
        "../envs/modelvar.yaml"
    shell:
        "python -m modelvar simulate --root-seed {params.root_seed} "
        "--n-classes {wildcards.n_classes} --distributions {params.distributions} "
        "--replicates {params.replicates} --n-samples {params.n_samples} --runs {params.runs} "
        "--out {output} 2> {log}"


rule evaluate_simulation:
    input:
        [f"{RESULTS}/simulation/metrics/classes-{c}.parquet" for c in SIM_CLASSES],
    output:
        simulations=f"{RESULTS}/simulation/metrics/simulations.parquet",
        criteria=f"{RESULTS}/simulation/metrics/criteria.parquet",
        ranking=f"{RESULTS}/simulation/metrics/ranking.parquet",
        html=report(
            f"{RESULTS}/simulation/metrics/ranking.html",
            caption="../workflow/report/simulation_ranking.rst",
            category="Simulation",
            subcategory="Reproducibility metrics (seed 000)",
        ),
        **{
            f"{fig}_png": report(
                f"{RESULTS}/simulation/metrics/{fig}.png",
                caption=f"../workflow/report/simulation_{fig}.rst",
                category="Simulation",
                subcategory="Reproducibility metrics (seed 000)",
            )
            for fig in ("metric_vs_accuracy", "metric_by_distribution")
        },
        **{
            f"{fig}_pdf": f"{RESULTS}/simulation/metrics/{fig}.pdf"
            for fig in ("metric_vs_accuracy", "metric_by_distribution")
        },
    params:
        out_dir=lambda wildcards, output: Path(output.simulations).parent,
        code=CODE["simulate_eval"],
    log:
        f"{RESULTS}/logs/evaluate_simulation.log",
    threads: resource("simulate", "threads", 1)
    resources:
        mem_mb=resource("simulate", "mem_mb", 2000),
        runtime=resource("simulate", "runtime", 30),
    conda:
        "../envs/modelvar.yaml"
    shell:
        "python -m modelvar evaluate-simulation --sims {input} --out-dir {params.out_dir} "
        "2> {log}"


rule dirichlet_simulation:
    output:
        per_sample=f"{RESULTS}/simulation/dirichlet/per_sample.parquet",
        spearman=f"{RESULTS}/simulation/dirichlet/spearman.parquet",
        html=report(
            f"{RESULTS}/simulation/dirichlet/spearman.html",
            caption="../workflow/report/dirichlet_spearman.rst",
            category="Simulation",
            subcategory="Entropy and confusion index (seed 002)",
        ),
        **{
            f"{fig}_png": report(
                f"{RESULTS}/simulation/dirichlet/{fig}.png",
                caption=f"../workflow/report/dirichlet_{fig}.rst",
                category="Simulation",
                subcategory="Entropy and confusion index (seed 002)",
            )
            for fig in DIRICHLET_FIGURES
        },
        **{f"{fig}_pdf": f"{RESULTS}/simulation/dirichlet/{fig}.pdf" for fig in DIRICHLET_FIGURES},
    params:
        root_seed=config["root_seed"],
        n=SIMULATION.get("dirichlet", {}).get("n", 1000),
        cases=json.dumps(get_dirichlet_cases()),
        out_dir=lambda wildcards, output: Path(output.per_sample).parent,
        code=CODE["dirichlet"],
    log:
        f"{RESULTS}/logs/dirichlet_simulation.log",
    threads: resource("simulate", "threads", 1)
    resources:
        mem_mb=resource("simulate", "mem_mb", 2000),
        runtime=resource("simulate", "runtime", 30),
    conda:
        "../envs/modelvar.yaml"
    shell:
        "python -m modelvar dirichlet --root-seed {params.root_seed} --n {params.n} "
        "--cases '{params.cases}' --out-dir {params.out_dir} 2> {log}"
