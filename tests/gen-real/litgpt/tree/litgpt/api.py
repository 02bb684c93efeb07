from pathlib import Path

import torch
import lightning as L
from lightning.fabric.plugins import BitsandbytesPrecision


class LLM(torch.nn.Module):
    pass
