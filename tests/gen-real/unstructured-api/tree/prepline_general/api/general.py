from fastapi import APIRouter
from unstructured.partition.auto import partition

router = APIRouter()
