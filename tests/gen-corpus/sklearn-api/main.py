import joblib
from fastapi import FastAPI

app = FastAPI()
