import torch
import torch.nn as nn
from einops import rearrange
from transformers import AutoTokenizer
