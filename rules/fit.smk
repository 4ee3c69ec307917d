rule fit:
    input:
        unpack(get_dataset_files),
    output:
        predictions=[
            f"{RESULTS}/{{dataset}}/{{classifier}}/{{cell}}/predictions/repeat-{r}.parquet"
            for r in REPEATS
        ],
        runs=[
            f"{RESULTS}/{{dataset}}/{{classifier}}/{{cell}}/runs/repeat-{r}.parquet"
            for r in REPEATS
        ],
    params:
        repeats=" ".join(str(int(r)) for r in REPEATS),
        n_runs=config["split"]["runs"],
        test_fraction=config["split"].get("test_fraction", 0.25),
        root_seed=config["root_seed"],
        code=CODE["fit"],
    log:
        f"{RESULTS}/logs/fit/{{dataset}}/{{classifier}}/{{cell}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/fit/{{dataset}}/{{classifier}}/{{cell}}.tsv"
    threads: resource("fit", "threads", 1)
    resources:
        mem_mb=resource("fit", "mem_mb", 2000),
        runtime=resource("fit", "runtime", 120),
    conda:
        "../envs/modelvar.yaml"
    shell:
        "OMP_NUM_THREADS={threads} OPENBLAS_NUM_THREADS={threads} "
        "python -m modelvar fit --data {input.data} --meta {input.meta} "
        "--classifier {wildcards.classifier} --cell {wildcards.cell} "
        "--repeats {params.repeats} --runs {params.n_runs} "
        "--test-fraction {params.test_fraction} --root-seed {params.root_seed} "
        "--predictions {output.predictions} --runs-out {output.runs} 2> {log}"
