import torch
import os
from huggingface_hub import hf_hub_download


def load_or_download_config(locale, use_hf=True, config_path=None):
    return hf_hub_download(repo_id=f"myshell-ai/MeloTTS-{locale}", filename="config.json")


def load_or_download_model(locale, device, use_hf=True, ckpt_path=None):
    return torch.load(hf_hub_download(repo_id=f"myshell-ai/MeloTTS-{locale}", filename="checkpoint.pth"), map_location=device)
