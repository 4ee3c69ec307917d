rule pairwise_metrics:
    input:
        predictions=get_repeat_predictions,
        meta=f"{RESULTS}/datasets/{{dataset}}.json",
    output:
        pairwise=f"{RESULTS}/{{dataset}}/{{classifier}}/{{cell}}/metrics/pairwise.parquet",
        summary=f"{RESULTS}/{{dataset}}/{{classifier}}/{{cell}}/metrics/summary.parquet",
        per_run=f"{RESULTS}/{{dataset}}/{{classifier}}/{{cell}}/metrics/per_run.parquet",
        agreement=f"{RESULTS}/{{dataset}}/{{classifier}}/{{cell}}/metrics/agreement.parquet",
        per_sample=f"{RESULTS}/{{dataset}}/{{classifier}}/{{cell}}/metrics/per_sample.parquet",
    params:
        ec_local_undefined=config.get("metrics", {}).get("ec_local_undefined", "nan"),
        code=CODE["pairwise"],
    log:
        f"{RESULTS}/logs/pairwise_metrics/{{dataset}}/{{classifier}}/{{cell}}.log",
    threads: resource("pairwise", "threads", 1)
    resources:
        mem_mb=resource("pairwise", "mem_mb", 2000),
        runtime=resource("pairwise", "runtime", 30),
    conda:
        "../envs/modelvar.yaml"
    shell:
        "python -m modelvar pairwise --predictions {input.predictions} --meta {input.meta} "
        "--ec-local-undefined {params.ec_local_undefined} "
        "--out-dir $(dirname {output.pairwise}) 2> {log}"
