import insightface
import cv2

import modules.globals

NAME = 'DLC.FACE-SWAPPER'
