import torch
import torch.nn as nn


class GPT(nn.Module):
    pass
