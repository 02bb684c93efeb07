from dataclasses import dataclass

import yaml


@dataclass
class Config:
    name: str = ""
