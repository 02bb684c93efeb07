import sys
import argparse
import os
import struct
import torch

if __name__ == '__main__':
    parser = argparse.ArgumentParser()
