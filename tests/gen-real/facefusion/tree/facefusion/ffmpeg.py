import shutil
import subprocess
from typing import List


def run_ffmpeg(commands : List[str]) -> subprocess.Popen:
	commands = [ shutil.which('ffmpeg'), '-loglevel', 'error' ] + commands
	return subprocess.Popen(commands, stderr = subprocess.PIPE, stdout = subprocess.PIPE)
