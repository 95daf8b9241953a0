import os


def run(cmd):
    return os.system(cmd)
