rule prepare_dataset:
    input:
        unpack(get_dataset_source),
    output:
        data=f"{RESULTS}/datasets/{{dataset}}.parquet",
        meta=f"{RESULTS}/datasets/{{dataset}}.json",
    log:
        f"{RESULTS}/logs/prepare_dataset/{{dataset}}.log",
    conda:
        "../envs/data.yaml"
    threads: threads_of("prepare")
    resources:
        **resources_of("prepare"),
    params:
        spec=get_dataset_spec,
        openml_cache=config["openml"]["cache_dir"],
        openml_server=config["openml"]["server"],
        openml_timeout=config["openml"]["timeout"],
        min_class_size=min_class_size(config),
        rare_classes=config["split"]["rare_classes"],
        manifest=manifest_path("prepare_dataset", "dataset"),
        code=CODE["prepare"],
    shell:
        modelvar_job(
            "prepare --name {wildcards.dataset:q} --spec {params.spec:q} --openml-cache "
            "{params.openml_cache:q} --openml-server {params.openml_server:q} "
            "--openml-timeout {params.openml_timeout:q} --min-class-size "
            "{params.min_class_size:q} --rare-classes {params.rare_classes:q} --out-parquet "
            "{output.data:q} --out-meta {output.meta:q} --manifest {params.manifest:q} 2> "
            "{log:q}",
        )


rule dataset_overview:
    input:
        [f"{RESULTS}/datasets/{ds}.json" for ds in DATASETS],
    output:
        report(
            f"{RESULTS}/datasets/overview.html",
            caption="../workflow/report/dataset_overview.rst",
            category=DATA_CATEGORY,
        ),
    log:
        f"{RESULTS}/logs/dataset_overview.log",
    conda:
        "../envs/data.yaml"
    threads: threads_of("plot")
    resources:
        **resources_of("plot"),
    params:
        manifest=manifest_path("dataset_overview"),
        code=CODE["dataset-overview"],
    shell:
        modelvar_job(
            "dataset-overview --meta {input:q} --out {output:q} --manifest "
            "{params.manifest:q} 2> {log:q}",
        )
