import os
import numpy as np
import torch
import dnnlib

from .. import custom_ops
