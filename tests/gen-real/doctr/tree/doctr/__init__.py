from . import io, models, datasets, transforms, utils
from .file_utils import is_tf_available, is_torch_available
from .version import __version__  # noqa: F401
