rule repeat_means_violin:
    input:
        get_dataset_summaries,
    output:
        png=report(
            f"{RESULTS}/{{dataset}}/figures/repeat_means_violin.png",
            caption="../workflow/report/repeat_means_violin.rst",
            category="{dataset}",
            subcategory="Per-repeat means",
        ),
        pdf=f"{RESULTS}/{{dataset}}/figures/repeat_means_violin.pdf",
    params:
        code=CODE["plot"],
    log:
        f"{RESULTS}/logs/repeat_means_violin/{{dataset}}.log",
    threads: resource("plot", "threads", 1)
    resources:
        mem_mb=resource("plot", "mem_mb", 1000),
        runtime=resource("plot", "runtime", 10),
    conda:
        "../envs/modelvar.yaml"
    shell:
        "python -m modelvar plot --dataset {wildcards.dataset} --summaries {input} "
        "--out {output.png} {output.pdf} 2> {log}"
