import importlib.metadata
import os
from os import path

import ffmpeg
import numpy as np

from fastapi import FastAPI, File, Query, UploadFile, applications
from fastapi.staticfiles import StaticFiles
from whisper import tokenizer

ASR_ENGINE = os.getenv("ASR_ENGINE", "openai_whisper")
if ASR_ENGINE == "faster_whisper":
    from .faster_whisper.core import language_detection, transcribe
else:
    from .openai_whisper.core import language_detection, transcribe

app = FastAPI()

assets_path = os.getcwd() + "/swagger-ui-assets"
