import httpx
import openai
import tiktoken
from dotenv import load_dotenv

from litellm.proxy.proxy_cli import run_server
