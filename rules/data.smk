rule prepare_dataset:
    output:
        data=f"{RESULTS}/datasets/{{dataset}}.parquet",
        meta=f"{RESULTS}/datasets/{{dataset}}.json",
    params:
        spec=get_dataset_spec,
        openml_cache=config["openml"]["cache_dir"],
        openml_server=config["openml"]["server"],
        code=CODE["prepare"],
    log:
        f"{RESULTS}/logs/prepare_dataset/{{dataset}}.log",
    threads: resource("prepare", "threads", 1)
    resources:
        mem_mb=resource("prepare", "mem_mb", 1000),
        runtime=resource("prepare", "runtime", 10),
    conda:
        "../envs/modelvar.yaml"
    shell:
        "python -m modelvar prepare --name {wildcards.dataset} --spec '{params.spec}' "
        "--openml-cache {params.openml_cache} --openml-server {params.openml_server} "
        "--out-parquet {output.data} --out-meta {output.meta} 2> {log}"
