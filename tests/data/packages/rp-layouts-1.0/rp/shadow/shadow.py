import subprocess


def shadow():
    return subprocess.call(["true"])
