import importlib


def load_model(*args, **kwargs):
    asr = importlib.import_module("whisperx.asr")
    return asr.load_model(*args, **kwargs)
