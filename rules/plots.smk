rule figures:
    input:
        unpack(get_figure_inputs),
    output:
        **{
            f"{fig}_png": report(
                f"{RESULTS}/{{dataset}}/figures/{fig}.png",
                caption=f"../workflow/report/{fig}.rst",
                category="{dataset}",
                subcategory="Figures",
            )
            for fig in FIGURES
        },
        **{f"{fig}_pdf": f"{RESULTS}/{{dataset}}/figures/{fig}.pdf" for fig in FIGURES},
    params:
        out_dir=lambda wildcards, output: Path(output[0]).parent,
        code=CODE["plot"],
    log:
        f"{RESULTS}/logs/figures/{{dataset}}.log",
    threads: resource("plot", "threads", 1)
    resources:
        mem_mb=resource("plot", "mem_mb", 2000),
        runtime=resource("plot", "runtime", 20),
    conda:
        "../envs/modelvar.yaml"
    shell:
        "python -m modelvar figures --dataset {wildcards.dataset} --summary {input.summary} "
        "--per-run {input.per_run} --per-sample {input.per_sample} "
        "--out-dir {params.out_dir} 2> {log}"


rule group_disparities_figure:
    input:
        aggregated("{dataset}", "disparities"),
    output:
        png=report(
            f"{RESULTS}/{{dataset}}/figures/group_disparities.png",
            caption="../workflow/report/group_disparities.rst",
            category="{dataset}",
            subcategory="Groups",
        ),
        pdf=f"{RESULTS}/{{dataset}}/figures/group_disparities.pdf",
    params:
        out_dir=lambda wildcards, output: Path(output[0]).parent,
        code=CODE["plot"],
    log:
        f"{RESULTS}/logs/group_disparities_figure/{{dataset}}.log",
    threads: resource("plot", "threads", 1)
    resources:
        mem_mb=resource("plot", "mem_mb", 2000),
        runtime=resource("plot", "runtime", 20),
    conda:
        "../envs/modelvar.yaml"
    shell:
        "python -m modelvar figures --dataset {wildcards.dataset} --disparities {input} "
        "--out-dir {params.out_dir} 2> {log}"
