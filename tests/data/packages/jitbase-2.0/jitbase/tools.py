import subprocess
from subprocess import check_output as _out


def run_compiler(spec):
    return subprocess.run(["nvcc", spec["name"]], check=True)


def check_tools(spec):
    return _out(["nvcc", "--version"])
