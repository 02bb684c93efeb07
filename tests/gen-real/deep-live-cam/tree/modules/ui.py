import os
import customtkinter as ctk
import cv2
from PIL import Image, ImageOps

import modules.globals


def init(start, destroy) -> ctk.CTk:
    root = ctk.CTk()
    return root
