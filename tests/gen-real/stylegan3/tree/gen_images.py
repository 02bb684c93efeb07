"""Generate images using pretrained network pickle."""
import os
import re
from typing import List, Optional, Tuple, Union

import click
import dnnlib
import numpy as np
import PIL.Image
import torch

import legacy


@click.command()
@click.option('--network', 'network_pkl', required=True)
@click.option('--seeds', required=True)
@click.option('--trunc', 'truncation_psi', type=float, default=1)
@click.option('--outdir', type=str, required=True)
def generate_images(network_pkl, seeds, truncation_psi, outdir):
    # loads the pickle on torch.device('cuda'), writes outdir/seedNNNN.png
    pass


if __name__ == "__main__":
    generate_images()
