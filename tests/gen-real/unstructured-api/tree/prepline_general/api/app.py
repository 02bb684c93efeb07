from fastapi import FastAPI, Request, status, HTTPException
from fastapi.responses import JSONResponse
import logging
import os

from .general import router as general_router

app = FastAPI(title="Unstructured Pipeline API", docs_url="/general/docs", openapi_url="/general/openapi.json")
app.include_router(general_router)
