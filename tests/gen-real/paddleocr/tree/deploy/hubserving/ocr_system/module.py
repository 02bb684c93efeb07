import os
import sys

sys.path.insert(0, ".")
import copy
import time

import paddlehub
from paddlehub.common.logger import logger
from paddlehub.module.module import moduleinfo, runnable, serving
import cv2
import numpy as np
import paddlehub as hub

from tools.infer.utility import base64_to_cv2
from tools.infer.predict_system import TextSystem
from tools.infer.utility import parse_args
from deploy.hubserving.ocr_system.params import read_params


@moduleinfo(name="ocr_system", version="1.0.0", summary="ocr system service", author="paddle-dev",
            author_email="paddle-dev@baidu.com", type="cv/PP-OCR_system")
class OCRSystem(hub.Module):
    def _initialize(self, use_gpu=False, enable_mkldnn=False):
        pass

    @serving
    def serving_method(self, images, **kwargs):
        pass
