import argparse
import os
import sys

from interpreter import interpreter

def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--server", action="store_true")
    ...
