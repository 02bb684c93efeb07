from pathlib import Path
from typing import Optional

from lightning_utilities.core.imports import RequirementCache
import torch

from litgpt.api import LLM

_LITSERVE_AVAILABLE = RequirementCache("litserve")
if _LITSERVE_AVAILABLE:
    from litserve import LitAPI, LitServer
else:
    LitAPI, LitServer = object, object


def run_server(
    checkpoint_dir: Path,
    quantize: Optional[str] = None,
    precision: Optional[str] = None,
    devices: int = 1,
    accelerator: str = "auto",
    port: int = 8000,
    stream: bool = False,
    access_token: Optional[str] = None,
) -> None:
    """Serve a LitGPT model using LitServe (checkpoint auto-downloaded from the HF hub into checkpoints/)."""
    # server = LitServer(SimpleLitAPI(...), accelerator=accelerator, devices=1)
    # server.run(port=port, generate_client_file=False)
