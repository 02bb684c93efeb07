# open_url() downloads network pickles and caches them under
# $DNNLIB_CACHE_DIR or $HOME/.cache/dnnlib
import os
import requests
