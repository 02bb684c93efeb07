import yaml
from fastapi import FastAPI

app = FastAPI(title="LiteLLM API")
