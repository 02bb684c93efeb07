import cv2
import numpy
