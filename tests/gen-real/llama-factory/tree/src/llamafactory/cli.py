import os
import subprocess
import sys


def main():
    pass  # subcommands: api, chat, eval, export, train, webchat, webui, version


if __name__ == "__main__":
    main()
