import signal
import sys
from argparse import ArgumentParser

import numpy

from facefusion import ffmpeg, inference_manager


def cli() -> None:
	signal.signal(signal.SIGINT, lambda signal_number, frame: sys.exit(0))
	program = ArgumentParser()
	sub_program = program.add_subparsers(dest = 'command')
	run_program = sub_program.add_parser('run')
	run_program.add_argument('--execution-providers', nargs = '+', default = [ 'cpu' ])
	run_program.add_argument('--ui-layouts', nargs = '+', default = [ 'default' ])
	run_program.add_argument('--open-browser', action = 'store_true')
	sub_program.add_parser('headless-run')
	sub_program.add_parser('batch-run')
	sub_program.add_parser('force-download')
	args = program.parse_args()
