import numpy as np
import torch
import deepspeed


def pretrain(neox_args):
    pass
