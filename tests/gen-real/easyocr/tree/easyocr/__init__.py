from .easyocr import Reader

__version__ = '1.1.4'
