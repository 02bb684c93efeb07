import sys
from ast import literal_eval
