import os
import torch
import whisper

model_name = os.getenv("ASR_MODEL", "base")
model_path = os.getenv("ASR_MODEL_PATH", os.path.join(os.path.expanduser("~"), ".cache", "whisper"))
if torch.cuda.is_available():
    model = whisper.load_model(model_name, download_root=model_path).cuda()
