import os
import sys

import django
from django.core.management import call_command

def main():
    # parses args, sets env, runs migrations, starts Django runserver (default port 8080)
    pass

if __name__ == "__main__":
    main()
