def _hidden():
    pass
