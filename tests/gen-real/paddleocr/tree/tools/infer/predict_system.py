import os
import sys

import cv2
import numpy as np
from PIL import Image

import tools.infer.utility as utility


class TextSystem(object):
    pass


if __name__ == "__main__":
    args = utility.parse_args()
