import torch
import fused_ops
