import os
import signal
import sys
import time
import warnings
from pathlib import Path

import yaml

from modules import shared, utils
import modules.extensions as extensions_module
from modules.models import load_model


def create_interface():
    import gradio as gr
    shared.gradio['interface'].launch(max_threads=64, prevent_thread_lock=True, share=shared.args.share, server_name=None if not shared.args.listen else (shared.args.listen_host or '0.0.0.0'), server_port=shared.args.listen_port)


if __name__ == "__main__":
    create_interface()
