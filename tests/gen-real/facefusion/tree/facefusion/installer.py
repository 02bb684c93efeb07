import os
import shutil
import subprocess
import sys
from argparse import ArgumentParser
from typing import Dict, Tuple

ONNXRUNTIMES : Dict[str, Tuple[str, str]] = {}
ONNXRUNTIMES['default'] = ('onnxruntime', '1.19.2')
ONNXRUNTIMES['cuda'] = ('onnxruntime-gpu', '1.19.2')
ONNXRUNTIMES['openvino'] = ('onnxruntime-openvino', '1.19.0')
ONNXRUNTIMES['rocm'] = ('onnxruntime-rocm', '1.18.0')


def cli() -> None:
	program = ArgumentParser()
	program.add_argument('--onnxruntime', choices = ONNXRUNTIMES.keys(), required = True)
	program.add_argument('--skip-conda', action = 'store_true')
	run(program)


def run(program : ArgumentParser) -> None:
	args = program.parse_args()
	onnxruntime_name, onnxruntime_version = ONNXRUNTIMES.get(args.onnxruntime)
	subprocess.call([ shutil.which('pip'), 'install', '-r', 'requirements.txt', '--force-reinstall' ])
	subprocess.call([ shutil.which('pip'), 'uninstall', 'onnxruntime', onnxruntime_name, '-y', '-q' ])
	subprocess.call([ shutil.which('pip'), 'install', onnxruntime_name + '==' + onnxruntime_version, '--force-reinstall' ])
	subprocess.call([ shutil.which('pip'), 'install', 'python-multipart==0.0.12', '--force-reinstall' ])
