import click
import pickle
import re
import copy
import numpy as np
import torch
import dnnlib
from torch_utils import misc
