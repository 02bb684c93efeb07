import argparse
import sys

from TTS.api import TTS
from TTS.utils.manage import ModelManager
from TTS.utils.synthesizer import Synthesizer


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out_path", type=str, default="tts_output.wav")
    parser.add_argument("--use_cuda", type=bool, default=False)


if __name__ == "__main__":
    main()
