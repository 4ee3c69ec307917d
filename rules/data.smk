rule prepare_dataset:
    input:
        unpack(get_dataset_source),
        recipe=recipe_of("prepare_dataset"),
    output:
        data=f"{RESULTS}/datasets/{{dataset}}.parquet",
        meta=f"{RESULTS}/datasets/{{dataset}}.json",
        manifest=manifest_path("prepare_dataset"),
    log:
        log_of("prepare_dataset"),
    conda:
        "../envs/data.yaml"
    threads: threads_of("prepare_dataset")
    resources:
        **resources_of("prepare_dataset"),
    params:
        spec=get_dataset_spec,
        openml_cache=config["openml"]["cache_dir"],
        openml_server=config["openml"]["server"],
        openml_timeout=config["openml"]["timeout"],
        min_class_size=min_class_size(config),
        rare_classes=config["split"]["rare_classes"],
        code=code_of("prepare_dataset"),
    shell:
        modelvar_job(
            "prepare --name {wildcards.dataset:q} --spec {params.spec:q} --openml-cache "
            "{params.openml_cache:q} --openml-server {params.openml_server:q} "
            "--openml-timeout {params.openml_timeout:q} --min-class-size "
            "{params.min_class_size:q} --rare-classes {params.rare_classes:q} --out-parquet "
            "{output.data:q} --out-meta {output.meta:q} --manifest {output.manifest:q} 2> "
            "{log:q}",
        )


# One dataset's design as the plan fits it (per classifier: its cells, their roles, the families
# collapsed for it), written where the figures and findings jobs read it: no job derives cells
# or roles from the config again.
rule design:
    input:
        recipe=recipe_of("design"),
    output:
        design=outputs.design_path(RESULTS, "{dataset}"),
        manifest=manifest_path("design"),
    log:
        log_of("design"),
    conda:
        "../envs/data.yaml"
    threads: threads_of("design")
    resources:
        **resources_of("design"),
    params:
        design=with_known_signature(
            lambda wildcards: PLAN.datasets[wildcards.dataset].design().to_json()
        ),
        code=code_of("design"),
    shell:
        modelvar_job(
            "design --design {params.design:q} --out {output.design:q} --manifest "
            "{output.manifest:q} 2> {log:q}",
        )


rule dataset_overview:
    input:
        meta=[f"{RESULTS}/datasets/{ds}.json" for ds in DATASETS],
        recipe=recipe_of("dataset_overview"),
    output:
        html=report(
            f"{RESULTS}/datasets/overview.html",
            caption="../workflow/report/dataset_overview.rst",
            category=DATA_CATEGORY,
            labels={"item": "datasets: rows, features, classes, sources"},
        ),
        manifest=manifest_path("dataset_overview"),
    log:
        log_of("dataset_overview"),
    conda:
        "../envs/data.yaml"
    threads: threads_of("dataset_overview")
    resources:
        **resources_of("dataset_overview"),
    params:
        code=code_of("dataset_overview"),
    shell:
        modelvar_job(
            "dataset-overview --meta {input.meta:q} --out {output.html:q} --manifest "
            "{output.manifest:q} 2> {log:q}",
        )
