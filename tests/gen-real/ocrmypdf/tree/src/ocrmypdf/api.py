import pikepdf
from PIL import Image


def ocr(input_file, output_file, **kwargs):
    pass
