from ocrmypdf.api import ocr
