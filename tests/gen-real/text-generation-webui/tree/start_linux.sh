#!/usr/bin/env bash
# installs miniconda into installer_files/, creates env, runs: python one_click.py "$@"
