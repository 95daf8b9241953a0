from .impl import *
from ._native import *
