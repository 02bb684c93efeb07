import cv2
import matplotlib.pyplot as plt
import numpy as np
import streamlit as st

from doctr.io import DocumentFile
from doctr.utils.visualization import visualize_page


def main(det_archs, reco_archs):
    st.set_page_config(layout="wide")


if __name__ == "__main__":
    main(DET_ARCHS, RECO_ARCHS)
