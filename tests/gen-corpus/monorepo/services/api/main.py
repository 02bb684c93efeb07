from fastapi import FastAPI

api = FastAPI()
