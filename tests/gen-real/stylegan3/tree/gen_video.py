"""Generate lerp videos using pretrained network pickle."""
import click
import imageio
import numpy as np
import scipy.interpolate
import torch
from tqdm import tqdm

import dnnlib
import legacy

if __name__ == "__main__":
    pass
