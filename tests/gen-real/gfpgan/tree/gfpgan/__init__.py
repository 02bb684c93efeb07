from .archs import *
from .data import *
from .models import *
from .utils import *
