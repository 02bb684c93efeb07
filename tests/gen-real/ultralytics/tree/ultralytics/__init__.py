__version__ = "8.3.20"

from ultralytics.models import YOLO
