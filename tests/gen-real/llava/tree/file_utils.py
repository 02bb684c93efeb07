import json
import os
import subprocess
import time

DEFAULT_WEIGHTS = []


def is_url(path):
    pass


def download_json(url, dest):
    pass


def download_weights(baseurl, basedest, files):
    pass  # runs `pget` per file
