import os


def helper(path):
    return os.stat(path)
