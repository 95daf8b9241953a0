from .impl import func
