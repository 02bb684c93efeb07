"""Train a GAN using the techniques described in the paper
"Alias-Free Generative Adversarial Networks"."""
import json
import os
import re
import tempfile

import click
import torch

import dnnlib
from training import training_loop
from metrics import metric_main
from torch_utils import training_stats
from torch_utils import custom_ops


@click.command()
@click.option('--outdir', type=str, required=True)
@click.option('--cfg', type=click.Choice(['stylegan3-t', 'stylegan3-r', 'stylegan2']), required=True)
@click.option('--data', type=str, required=True)
@click.option('--gpus', type=click.IntRange(min=1), required=True)
@click.option('--batch', type=click.IntRange(min=1), required=True)
@click.option('--gamma', type=click.FloatRange(min=0), required=True)
def main(**kwargs):
    # spawns one process per GPU (torch.multiprocessing), NCCL
    pass


if __name__ == "__main__":
    main()
