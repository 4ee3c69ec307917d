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
    log:
        f"{RESULTS}/logs/figures/{{dataset}}.log",
    conda:
        "../envs/plots.yaml"
    threads: threads_of("plot")
    resources:
        **resources_of("plot"),
    params:
        out_dir=lambda wildcards, output: Path(output[0]).parent,
        code=CODE["plot"],
    shell:
        modelvar_job(
            "figures --dataset {wildcards.dataset:q} --summary {input.summary:q} --per-run "
            "{input.per_run:q} --agreement {input.agreement:q} --out-dir {params.out_dir:q} "
            "2> {log:q}",
        )


rule group_disparities_figure:
    input:
        lambda wildcards: dataset_tables(wildcards.dataset, "disparities"),
    output:
        png=report(
            f"{RESULTS}/{{dataset}}/figures/group_disparities.png",
            caption="../workflow/report/group_disparities.rst",
            category="{dataset}",
            subcategory="Groups",
        ),
        pdf=f"{RESULTS}/{{dataset}}/figures/group_disparities.pdf",
    log:
        f"{RESULTS}/logs/group_disparities_figure/{{dataset}}.log",
    conda:
        "../envs/plots.yaml"
    threads: threads_of("plot")
    resources:
        **resources_of("plot"),
    params:
        out_dir=lambda wildcards, output: Path(output[0]).parent,
        code=CODE["plot"],
    shell:
        modelvar_job(
            "figures --dataset {wildcards.dataset:q} --disparities {input:q} --out-dir "
            "{params.out_dir:q} 2> {log:q}",
        )
