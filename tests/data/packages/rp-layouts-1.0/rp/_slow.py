import subprocess


def compile_kernel(src):
    return subprocess.run(["cc", src])
