# Streamlit front end for OCRmyPDF (optional extra "webservice").
# Run with: streamlit run misc/webservice.py
import streamlit as st

import ocrmypdf
