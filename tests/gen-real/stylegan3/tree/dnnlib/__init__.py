from .util import EasyDict, make_cache_dir_path
