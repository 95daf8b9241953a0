def compile_kernel(src):
    return open(src).read()
