import os.path


def helper(path):
    return os.path.exists(path)
