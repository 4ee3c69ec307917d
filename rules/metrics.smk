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
    log:
        f"{RESULTS}/logs/pairwise_metrics/{{dataset}}/{{classifier}}/{{chunk}}.log",
    conda:
        "../envs/metrics.yaml"
    threads: threads_of("pairwise")
    resources:
        **resources_of("pairwise"),
    params:
        cells=get_chunk_cells,
        out_dir=lambda wildcards, output: Path(output[0]).parent,
        ec_local_undefined=config.get("metrics", {}).get("ec_local_undefined", "nan"),
        manifest=manifest_path("pairwise_metrics", "dataset", "classifier", "chunk"),
        code=CODE["pairwise"],
    shell:
        modelvar_job(
            "pairwise --predictions {input.predictions:q} --meta {input.meta:q} --cells "
            "{params.cells:q} --ec-local-undefined {params.ec_local_undefined:q} --out-dir "
            "{params.out_dir:q} --manifest {params.manifest:q} 2> {log:q}",
        )


rule grouped_metrics:
    input:
        predictions=get_chunk_predictions,
        data=f"{RESULTS}/datasets/{{dataset}}.parquet",
        meta=f"{RESULTS}/datasets/{{dataset}}.json",
    output:
        grouped=chunk_paths("metrics", "grouped"),
        disparities=chunk_paths("metrics", "disparities"),
    log:
        f"{RESULTS}/logs/grouped_metrics/{{dataset}}/{{classifier}}/{{chunk}}.log",
    conda:
        "../envs/metrics.yaml"
    threads: threads_of("grouped")
    resources:
        **resources_of("grouped"),
    params:
        cells=get_chunk_cells,
        out_dir=lambda wildcards, output: Path(output[0]).parent,
        groupings=lambda wildcards: json.dumps(GROUPED[wildcards.dataset]),
        metrics=GROUPED_METRICS,
        ec_local_undefined=config.get("metrics", {}).get("ec_local_undefined", "nan"),
        manifest=manifest_path("grouped_metrics", "dataset", "classifier", "chunk"),
        code=CODE["grouped"],
    shell:
        modelvar_job(
            "grouped --predictions {input.predictions:q} --data {input.data:q} --meta "
            "{input.meta:q} --cells {params.cells:q} --groupings {params.groupings:q} "
            "--metrics {params.metrics:q} --ec-local-undefined {params.ec_local_undefined:q} "
            "--out-dir {params.out_dir:q} --manifest {params.manifest:q} 2> {log:q}",
        )


rule aggregate_dataset:
    input:
        unpack(get_aggregate_inputs),
    output:
        **{t: aggregated("{dataset}", t) for t in AGGREGATED_TABLES},
    log:
        f"{RESULTS}/logs/aggregate_dataset/{{dataset}}.log",
    conda:
        "../envs/metrics.yaml"
    threads: threads_of("aggregate")
    resources:
        **resources_of("aggregate"),
    params:
        out_dir=lambda wildcards, output: Path(output[0]).parents[2],
        manifest=manifest_path("aggregate_dataset", "dataset"),
        code=CODE["aggregate"],
    shell:
        modelvar_job(
            "aggregate --out-dir {params.out_dir:q} --dataset {wildcards.dataset:q} --summary "
            "{input.summary:q} --per-run {input.per_run:q} --agreement {input.agreement:q} "
            "--per-sample {input.per_sample:q} --runs {input.runs:q} --manifest "
            "{params.manifest:q} 2> {log:q}",
        )


rule aggregate_grouped:
    input:
        grouped=lambda wildcards: chunk_tables(wildcards.dataset, "grouped"),
        disparities=lambda wildcards: chunk_tables(wildcards.dataset, "disparities"),
    output:
        grouped=aggregated("{dataset}", "grouped"),
        disparities=aggregated("{dataset}", "disparities"),
    log:
        f"{RESULTS}/logs/aggregate_grouped/{{dataset}}.log",
    conda:
        "../envs/metrics.yaml"
    threads: threads_of("aggregate")
    resources:
        **resources_of("aggregate"),
    params:
        out_dir=lambda wildcards, output: Path(output[0]).parents[2],
        manifest=manifest_path("aggregate_grouped", "dataset"),
        code=CODE["aggregate"],
    shell:
        modelvar_job(
            "aggregate --out-dir {params.out_dir:q} --dataset {wildcards.dataset:q} --grouped "
            "{input.grouped:q} --disparities {input.disparities:q} --manifest "
            "{params.manifest:q} 2> {log:q}",
        )
