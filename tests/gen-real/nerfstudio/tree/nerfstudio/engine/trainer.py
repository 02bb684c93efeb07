import torch
from rich.console import Console


class TrainerConfig:
    pass
