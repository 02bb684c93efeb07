import logging
import re

from litgpt.api import LLM
from litgpt.config import Config
from litgpt.model import GPT

__all__ = ["LLM", "GPT", "Config"]
