import torch
from torch.utils.data import Dataset
from deepspeed import zero
import transformers
from transformers import Trainer, GPTQConfig, deepspeed
from peft import LoraConfig, get_peft_model, prepare_model_for_kbit_training
from accelerate.utils import DistributedType


def train():
    pass


if __name__ == "__main__":
    train()
