import glob
import os
import subprocess
from typing import List

from tqdm import tqdm

import modules.globals

TEMP_FILE = "temp.mp4"
TEMP_DIRECTORY = "temp"


def run_ffmpeg(args: List[str]) -> bool:
    commands = [
        "ffmpeg",
        "-hide_banner",
        "-hwaccel", "auto",
        "-loglevel", modules.globals.log_level,
    ]
    commands.extend(args)
    subprocess.check_output(commands, stderr=subprocess.STDOUT)
    return True


def detect_fps(target_path: str) -> float:
    command = ["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "stream=r_frame_rate", "-of", "default=noprint_wrappers=1:nokey=1", target_path]
    output = subprocess.check_output(command).decode().strip().split("/")
    return 30.0


def extract_frames(target_path: str) -> None:
    run_ffmpeg(["-i", target_path, "-pix_fmt", "rgb24", os.path.join(TEMP_DIRECTORY, "%04d.png")])


def create_video(target_path: str, fps: float = 30.0) -> None:
    run_ffmpeg(["-r", str(fps), "-i", os.path.join(TEMP_DIRECTORY, "%04d.png"), "-c:v", modules.globals.video_encoder, target_path])


def restore_audio(target_path: str, output_path: str) -> None:
    run_ffmpeg(["-i", target_path, "-c:v", "copy", "-map", "0:v:0", "-map", "1:a:0", "-y", output_path])
