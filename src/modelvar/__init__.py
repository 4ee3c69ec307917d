"""modelvar: how much do classifiers vary when their training is perturbed?

The library is organised so that data flows one way:
``datasets -> splits -> perturbations -> preprocess -> models -> predictions -> metrics -> plots``.
The Snakemake workflow (``Snakefile``, ``rules/``) calls it through ``python -m modelvar ...``;
nothing here imports the workflow.
"""

__version__ = "0.1.0"
