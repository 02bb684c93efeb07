"""Fraud scoring API: a logistic regression over four transaction features.

It trains in well under a second on a CPU at start-up (on synthetic data
here; on yours from a file), which is why this project needs no GPU image.
"""
import numpy as np
from fastapi import FastAPI
from pydantic import BaseModel
from sklearn.linear_model import LogisticRegression


def synthetic_transactions(n: int, seed: int = 7):
    rng = np.random.default_rng(seed)
    amount = rng.lognormal(3.0, 1.0, n)
    foreign = rng.integers(0, 2, n)
    night = rng.integers(0, 2, n)
    velocity = rng.poisson(2.0, n)
    logit = -6.0 + 0.01 * amount + 1.5 * foreign + 1.0 * night + 0.4 * velocity
    fraud = rng.random(n) < 1.0 / (1.0 + np.exp(-logit))
    return np.column_stack([amount, foreign, night, velocity]), fraud


features, labels = synthetic_transactions(20_000)
model = LogisticRegression(max_iter=1000).fit(features, labels)


class Transaction(BaseModel):
    amount: float
    foreign: bool
    night: bool
    velocity: int


app = FastAPI(title="fraud-api")


@app.post("/score")
def score(t: Transaction) -> dict:
    row = np.array([[t.amount, float(t.foreign), float(t.night), float(t.velocity)]])
    return {"fraud_probability": float(model.predict_proba(row)[0, 1])}
