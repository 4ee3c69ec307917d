rule pairwise_metrics:
    input:
        predictions=get_chunk_predictions,
        meta=f"{RESULTS}/datasets/{{dataset}}.json",
    output:
        pairwise=chunk_paths("metrics", "pairwise"),
        summary=chunk_paths("metrics", "summary"),
        per_run=chunk_paths("metrics", "per_run"),
        agreement=chunk_paths("metrics", "agreement"),
        per_sample=chunk_paths("metrics", "per_sample"),
    params:
        cells=get_chunk_cells,
        out_dir=lambda wildcards, output: Path(output[0]).parent,
        ec_local_undefined=config.get("metrics", {}).get("ec_local_undefined", "nan"),
        code=CODE["pairwise"],
    log:
        f"{RESULTS}/logs/pairwise_metrics/{{dataset}}/{{classifier}}/{{chunk}}.log",
    threads: resource("pairwise", "threads", 1)
    resources:
        mem_mb=resource("pairwise", "mem_mb", 2000),
        runtime=resource("pairwise", "runtime", 30),
    conda:
        "../envs/modelvar.yaml"
    shell:
        "python -m modelvar pairwise --predictions {input.predictions} --meta {input.meta} "
        "--cells {params.cells} --ec-local-undefined {params.ec_local_undefined} "
        "--out-dir {params.out_dir} 2> {log}"


rule grouped_metrics:
    input:
        predictions=get_chunk_predictions,
        data=f"{RESULTS}/datasets/{{dataset}}.parquet",
        meta=f"{RESULTS}/datasets/{{dataset}}.json",
    output:
        grouped=chunk_paths("metrics", "grouped"),
        disparities=chunk_paths("metrics", "disparities"),
    params:
        cells=get_chunk_cells,
        out_dir=lambda wildcards, output: Path(output[0]).parent,
        groupings=lambda wildcards: json.dumps(GROUPED[wildcards.dataset]),
        metrics=" ".join(GROUPED_METRICS),
        ec_local_undefined=config.get("metrics", {}).get("ec_local_undefined", "nan"),
        code=CODE["grouped"],
    log:
        f"{RESULTS}/logs/grouped_metrics/{{dataset}}/{{classifier}}/{{chunk}}.log",
    threads: resource("grouped", "threads", 1)
    resources:
        mem_mb=resource("grouped", "mem_mb", 2000),
        runtime=resource("grouped", "runtime", 30),
    conda:
        "../envs/modelvar.yaml"
    shell:
        "python -m modelvar grouped --predictions {input.predictions} --data {input.data} "
        "--meta {input.meta} --cells {params.cells} --groupings '{params.groupings}' "
        "--metrics {params.metrics} --ec-local-undefined {params.ec_local_undefined} "
        "--out-dir {params.out_dir} 2> {log}"


rule aggregate_dataset:
    input:
        unpack(get_aggregate_inputs),
    output:
        **{t: aggregated("{dataset}", t) for t in AGGREGATED_TABLES},
    params:
        out_dir=lambda wildcards, output: Path(output[0]).parents[2],
        code=CODE["aggregate"],
    log:
        f"{RESULTS}/logs/aggregate_dataset/{{dataset}}.log",
    threads: resource("aggregate", "threads", 1)
    resources:
        mem_mb=resource("aggregate", "mem_mb", 4000),
        runtime=resource("aggregate", "runtime", 30),
    conda:
        "../envs/modelvar.yaml"
    shell:
        "python -m modelvar aggregate --out-dir {params.out_dir} --dataset {wildcards.dataset} "
        "--summary {input.summary} --per-run {input.per_run} --agreement {input.agreement} "
        "--per-sample {input.per_sample} --runs {input.runs} 2> {log}"


rule aggregate_grouped:
    input:
        grouped=lambda wildcards: chunk_tables(wildcards.dataset, "grouped"),
        disparities=lambda wildcards: chunk_tables(wildcards.dataset, "disparities"),
    output:
        grouped=aggregated("{dataset}", "grouped"),
        disparities=aggregated("{dataset}", "disparities"),
    params:
        out_dir=lambda wildcards, output: Path(output[0]).parents[2],
        code=CODE["aggregate"],
    log:
        f"{RESULTS}/logs/aggregate_grouped/{{dataset}}.log",
    threads: resource("aggregate", "threads", 1)
    resources:
        mem_mb=resource("aggregate", "mem_mb", 4000),
        runtime=resource("aggregate", "runtime", 30),
    conda:
        "../envs/modelvar.yaml"
    shell:
        "python -m modelvar aggregate --out-dir {params.out_dir} --dataset {wildcards.dataset} "
        "--grouped {input.grouped} --disparities {input.disparities} 2> {log}"
