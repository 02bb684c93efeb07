"""Interactive model visualizer (OpenGL window: glfw + imgui)."""
import click
import imgui
import numpy as np

import dnnlib
from gui_utils import imgui_window

if __name__ == "__main__":
    pass
