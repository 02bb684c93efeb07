from abc import ABC, abstractmethod
from pathlib import Path

import onnxruntime as ort
from huggingface_hub import snapshot_download

from ..config import settings


class InferenceModel(ABC):
    # downloads the model from Hugging Face into settings.cache_folder (/cache)
    pass
