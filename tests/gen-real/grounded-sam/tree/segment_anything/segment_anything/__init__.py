from .build_sam import sam_model_registry
from .predictor import SamPredictor
