# One metrics job per group of fit jobs (modelvar.planning.plan): it reads their predictions one
# repeat at a time and writes the metric tables straight into the aggregated dataset
# (modelvar.pipeline.result_tables).
rule pairwise_metrics:
    input:
        predictions=get_metrics_predictions,
        meta=f"{RESULTS}/datasets/{{dataset}}.json",
        recipe=recipe_of("pairwise_metrics"),
    output:
        **{
            t: table_file(t, "{dataset}", "{classifier}", "{job}")
            for t in tables.METRIC_TABLES
        },
        manifest=manifest_path("pairwise_metrics"),
    log:
        log_of("pairwise_metrics"),
    conda:
        "../envs/metrics.yaml"
    threads: threads_of("pairwise_metrics")
    resources:
        **resources_of("pairwise_metrics", metrics_job),
    params:
        # RESULTS, from RESULTS/aggregated/TABLE/dataset=D/classifier=K/JOB.parquet
        results=with_known_signature(
            lambda wildcards, output: Path(output[0]).parents[4]
        ),
        ec_local_undefined=config["metrics"]["ec_local_undefined"],
        code=code_of("pairwise_metrics"),
    shell:
        modelvar_job(
            "pairwise --predictions {input.predictions:q} --meta {input.meta:q} --results "
            "{params.results:q} --dataset {wildcards.dataset:q} --classifier "
            "{wildcards.classifier:q} --job {wildcards.job:q} --ec-local-undefined "
            "{params.ec_local_undefined:q} --manifest {output.manifest:q} 2> {log:q}",
        )


rule grouped_metrics:
    input:
        predictions=get_metrics_predictions,
        data=f"{RESULTS}/datasets/{{dataset}}.parquet",
        meta=f"{RESULTS}/datasets/{{dataset}}.json",
        recipe=recipe_of("grouped_metrics"),
    output:
        **{
            t: table_file(t, "{dataset}", "{classifier}", "{job}")
            for t in tables.GROUPED_TABLES
        },
        manifest=manifest_path("grouped_metrics"),
    log:
        log_of("grouped_metrics"),
    conda:
        "../envs/metrics.yaml"
    threads: threads_of("grouped_metrics")
    resources:
        **resources_of("grouped_metrics", metrics_job),
    params:
        # RESULTS, from RESULTS/aggregated/TABLE/dataset=D/classifier=K/JOB.parquet
        results=with_known_signature(
            lambda wildcards, output: Path(output[0]).parents[4]
        ),
        groupings=with_known_signature(
            lambda wildcards: json.dumps(GROUPED[wildcards.dataset])
        ),
        metrics=config["grouped"]["metrics"],
        ec_local_undefined=config["metrics"]["ec_local_undefined"],
        code=code_of("grouped_metrics"),
    shell:
        modelvar_job(
            "grouped --predictions {input.predictions:q} --data {input.data:q} --meta "
            "{input.meta:q} --results {params.results:q} --dataset {wildcards.dataset:q} "
            "--classifier {wildcards.classifier:q} --job {wildcards.job:q} --groupings "
            "{params.groupings:q} --metrics {params.metrics:q} --ec-local-undefined "
            "{params.ec_local_undefined:q} --manifest {output.manifest:q} 2> {log:q}",
        )
