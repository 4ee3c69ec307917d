rule figures:
    input:
        unpack(get_figure_inputs),
        recipe=recipe_of("figures", get_figure_inputs),
    output:
        **{
            f"{fig}_png": report(
                f"{RESULTS}/{{dataset}}/figures/{fig}.png",
                caption=f"../workflow/report/{fig}.rst",
                category=dataset_category,
                subcategory="Figures and tables",
                labels=figure_label(fig),
            )
            for fig in FIGURES
        },
        **{
            f"{fig}_{ext}": f"{RESULTS}/{{dataset}}/figures/{fig}.{ext}"
            for fig in FIGURES
            for ext in FIGURE_FORMATS[1:]
        },
        manifest=manifest_path("figures"),
    log:
        log_of("figures"),
    conda:
        "../envs/plots.yaml"
    threads: threads_of("figures")
    resources:
        **resources_of("figures"),
    params:
        out_dir=with_known_signature(lambda wildcards, output: Path(output[0]).parent),
        design=DESIGN,
        width=config["figures"]["width"],
        colours=COLOURS_JSON,
        code=code_of("figures"),
    shell:
        modelvar_job(
            "figures --dataset {wildcards.dataset:q} "
            + figure_table_args()
            + " --design-file {input.design:q} --design {params.design:q} --out-dir "
            "{params.out_dir:q} --manifest {output.manifest:q} --width {params.width:q} "
            "--colours {params.colours:q} 2> {log:q}",
        )


rule group_disparities_figure:
    input:
        disparities=with_known_signature(
            lambda wildcards: dataset_tables(wildcards.dataset, "disparities")
        ),
        design=outputs.design_path(RESULTS, "{dataset}"),
        recipe=recipe_of(
            "group_disparities_figure",
            lambda wildcards: dataset_tables(wildcards.dataset, "disparities"),
        ),
    output:
        **{
            f"{fig}_png": report(
                f"{RESULTS}/{{dataset}}/figures/{fig}.png",
                caption=f"../workflow/report/{fig}.rst",
                category=dataset_category,
                subcategory="Figures and tables",
                labels=figure_label(fig),
            )
            for fig in GROUPED_FIGURES
        },
        **{
            f"{fig}_{ext}": f"{RESULTS}/{{dataset}}/figures/{fig}.{ext}"
            for fig in GROUPED_FIGURES
            for ext in FIGURE_FORMATS[1:]
        },
        manifest=manifest_path("group_disparities_figure"),
    log:
        log_of("group_disparities_figure"),
    conda:
        "../envs/plots.yaml"
    threads: threads_of("group_disparities_figure")
    resources:
        **resources_of("group_disparities_figure"),
    params:
        out_dir=with_known_signature(lambda wildcards, output: Path(output[0]).parent),
        design=DESIGN,
        width=config["figures"]["width"],
        colours=COLOURS_JSON,
        code=code_of("group_disparities_figure"),
    shell:
        modelvar_job(
            "figures --dataset {wildcards.dataset:q} --disparities {input.disparities:q} "
            "--design-file {input.design:q} --design "
            "{params.design:q} --out-dir {params.out_dir:q} --manifest {output.manifest:q} "
            "--width {params.width:q} --colours {params.colours:q} 2> {log:q}",
        )


# The study's answer, from the aggregated tables of every dataset (never the predictions): the
# report's Findings page, its headline figures, the study tables, each dataset's summary page.
rule findings:
    input:
        unpack(get_findings_inputs),
        recipe=recipe_of("findings", get_findings_inputs),
    output:
        **{
            f"{fig}_png": report(
                f"{RESULTS}/findings/{fig}.png",
                caption=f"../workflow/report/{findings_figures.caption_file(fig)}",
                category=FINDINGS_CATEGORY,
                subcategory="The study's answer",
                labels={"item": f"{i}. {fig.replace('_', ' ')}"},
            )
            for i, fig in enumerate(FINDINGS_FIGURES, start=2)
        },
        **{
            f"{fig}_{ext}": f"{RESULTS}/findings/{fig}.{ext}"
            for fig in FINDINGS_FIGURES
            for ext in FIGURE_FORMATS[1:]
        },
        **{t: tables.study_table_path(RESULTS, t) for t in outputs.FINDINGS_TABLES},
        answer=ANSWER,
        html=report(
            f"{RESULTS}/findings/findings.html",
            caption="../workflow/report/findings.rst",
            category=FINDINGS_CATEGORY,
            subcategory="The study's answer",
            labels={"item": "1. findings: sentences, tables, claims"},
        ),
        summaries=[
            report(
                f"{RESULTS}/{ds}/summary.html",
                caption="../workflow/report/dataset_summary.rst",
                category=f"3.{i:02d}. {ds}",
                subcategory="Figures and tables",
                labels={"figure": "01. every cell: summary table"},
            )
            for i, ds in enumerate(DATASETS, start=1)
        ],
        manifest=manifest_path("findings"),
    log:
        log_of("findings"),
    benchmark:
        f"{RESULTS}/benchmarks/findings.tsv"
    conda:
        "../envs/findings.yaml"
    threads: threads_of("findings")
    resources:
        **resources_of("findings"),
    params:
        results=with_known_signature(
            lambda wildcards, output: Path(output.html).parents[1]
        ),
        perturbation=PERTURBATION_JSON,
        design=DESIGN,
        weak=config["perturbation"]["warn_changed_below"],
        margin=config["findings"]["equivalence_ratio"],
        sequential=SEQUENTIAL_JSON,
        width=config["figures"]["width"],
        colours=COLOURS_JSON,
        code=code_of("findings"),
    shell:
        modelvar_job_from_file(
            "findings --summary {input.summary:q} --agreement {input.agreement:q} --runs "
            "{input.runs:q} --meta {input.meta:q} --design-files {input.design:q} "
            "--perturbation {params.perturbation:q} "
            "--design {params.design:q} --warn-changed-below {params.weak:q} "
            "--equivalence-ratio {params.margin:q} --sequential={params.sequential:q} "
            "--results {params.results:q} "
            "--manifest {output.manifest:q} --width {params.width:q} --colours "
            "{params.colours:q}",
        )
