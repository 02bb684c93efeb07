from .yolo import YOLO
