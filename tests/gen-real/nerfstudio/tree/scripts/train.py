#!/usr/bin/env python
"""Train a radiance field with nerfstudio (ns-train)."""
from __future__ import annotations

import numpy as np
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import tyro
import yaml
from rich.console import Console

from nerfstudio.configs.method_configs import AnnotatedBaseConfigUnion
from nerfstudio.engine.trainer import TrainerConfig

torch.backends.cudnn.benchmark = True


def main(config: TrainerConfig) -> None:
    # launches one process per GPU (nccl) and trains; writes to outputs/
    pass


def entrypoint():
    main(tyro.cli(AnnotatedBaseConfigUnion))


if __name__ == "__main__":
    entrypoint()
