import subprocess


def ver():
    return subprocess.check_output(["nvcc", "--version"])
