import os
import wave
import json
import threading
import numpy as np
import pyaudio
import websocket
import ffmpeg
