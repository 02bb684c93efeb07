#!flask/bin/python
import argparse
import io
import json
import os
import sys
from pathlib import Path
from threading import Lock

from flask import Flask, render_template, request, send_file

from TTS.config import load_config
from TTS.utils.manage import ModelManager
from TTS.utils.synthesizer import Synthesizer


def create_argparser():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model_name", type=str, default="tts_models/en/ljspeech/tacotron2-DDC")
    parser.add_argument("--port", type=int, default=5002, help="port to listen on.")
    parser.add_argument("--use_cuda", type=bool, default=False, help="true to use CUDA.")
    return parser


args = create_argparser().parse_args()
app = Flask(__name__)


def main():
    app.run(debug=args.debug, host="::", port=args.port)


if __name__ == "__main__":
    main()
