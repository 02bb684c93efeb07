from .llama_cpp import *
from .llama import *
