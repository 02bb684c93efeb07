import os
import torch
from gfpgan import GFPGANer
from tqdm import tqdm
