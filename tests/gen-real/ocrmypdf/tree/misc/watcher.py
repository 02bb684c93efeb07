# Watches a folder and OCRs PDFs dropped into it (optional extra "watcher").
# Reads OCR_INPUT_DIRECTORY / OCR_OUTPUT_DIRECTORY from the environment.
import os

from watchdog.events import PatternMatchingEventHandler
from watchdog.observers import Observer

import ocrmypdf

INPUT_DIRECTORY = os.getenv("OCR_INPUT_DIRECTORY", "/input")
OUTPUT_DIRECTORY = os.getenv("OCR_OUTPUT_DIRECTORY", "/output")

if __name__ == "__main__":
    pass
