import os
import sys
if any(arg.startswith('--execution-provider') for arg in sys.argv):
    os.environ['OMP_NUM_THREADS'] = '1'
import shutil
import argparse
import torch
import onnxruntime
import tensorflow

import modules.globals
import modules.ui as ui
from modules.utilities import extract_frames, create_video, restore_audio


def parse_args() -> None:
    program = argparse.ArgumentParser()
    program.add_argument('-s', '--source', dest='source_path')
    program.add_argument('-t', '--target', dest='target_path')
    program.add_argument('-o', '--output', dest='output_path')
    program.add_argument('--frame-processor', dest='frame_processor', default=['face_swapper'], choices=['face_swapper', 'face_enhancer'], nargs='+')
    program.add_argument('--execution-provider', dest='execution_provider', default=['cpu'], nargs='+')
    program.add_argument('--execution-threads', dest='execution_threads', type=int, default=8)
    args = program.parse_args()
    modules.globals.headless = args.source_path or args.target_path or args.output_path


def pre_check() -> bool:
    if not shutil.which('ffmpeg'):
        return False
    return True


def run() -> None:
    parse_args()
    if not pre_check():
        return
    if not modules.globals.headless:
        window = ui.init(None, None)
        window.mainloop()
