from .spec import get_module
from .loader import *
