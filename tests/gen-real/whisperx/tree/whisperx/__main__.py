import argparse
import importlib.metadata
import platform

import torch


def cli():
    parser = argparse.ArgumentParser(formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("audio", nargs="+", type=str)
    parser.add_argument("--model", default="small")
    parser.add_argument("--model_dir", type=str, default=None)
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--compute_type", default="default", type=str, choices=["default", "float16", "float32", "int8"])
    parser.add_argument("--output_dir", "-o", type=str, default=".")
    parser.add_argument("--diarize", action="store_true")
    parser.add_argument("--diarize_model", default="pyannote/speaker-diarization-community-1", type=str)
    parser.add_argument("--hf_token", type=str, default=None)
    args = parser.parse_args().__dict__

    from whisperx.transcribe import transcribe_task

    transcribe_task(args, parser)


if __name__ == "__main__":
    cli()
