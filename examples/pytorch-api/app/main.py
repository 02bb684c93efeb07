"""A PyTorch inference API: scores feature vectors with a small network.

Run locally with `uvicorn app.main:app`; in the image, imgsmith-probe checks
the GPU first and then starts the same command.
"""
import torch
from fastapi import FastAPI
from pydantic import BaseModel

DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")

torch.manual_seed(0)
model = torch.nn.Sequential(
    torch.nn.Linear(16, 64),
    torch.nn.ReLU(),
    torch.nn.Linear(64, 1),
).to(DEVICE).eval()


class Batch(BaseModel):
    rows: list[list[float]]


app = FastAPI(title="pytorch-api")


@app.get("/healthz")
def healthz() -> dict:
    return {"device": str(DEVICE), "cuda": torch.version.cuda}


@app.post("/score")
def score(batch: Batch) -> dict:
    with torch.inference_mode():
        x = torch.tensor(batch.rows, dtype=torch.float32, device=DEVICE)
        return {"scores": model(x).squeeze(-1).tolist()}
