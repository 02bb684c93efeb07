import os
import pickle
import requests
import numpy as np
