import common
import torch

print(common.__name__, torch.cuda.is_available())
