rule prepare_dataset:
    input:
        unpack(get_dataset_source),
    output:
        data=f"{RESULTS}/datasets/{{dataset}}.parquet",
        meta=f"{RESULTS}/datasets/{{dataset}}.json",
    params:
        spec=get_dataset_spec,
        openml_cache=config["openml"]["cache_dir"],
        openml_server=config["openml"]["server"],
        manifest=manifest_path("prepare_dataset", "dataset"),
        code=CODE["prepare"],
    log:
        f"{RESULTS}/logs/prepare_dataset/{{dataset}}.log",
    threads: threads_of("prepare")
    resources:
        **resources_of("prepare"),
    conda:
        "../envs/modelvar.yaml"
    shell:
        "{PYTHON} -m modelvar prepare --name {wildcards.dataset:q} --spec {params.spec:q} "
        "--openml-cache {params.openml_cache:q} --openml-server {params.openml_server:q} "
        "--out-parquet {output.data:q} --out-meta {output.meta:q} "
        "--manifest {params.manifest:q} 2> {log:q}"
