import os
import sys

from .serve import SubCliServe


def run():
    """The entry point of running LMDeploy CLI."""
    SubCliServe.add_parsers()
