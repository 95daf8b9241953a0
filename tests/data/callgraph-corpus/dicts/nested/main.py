def cpu_add():
    pass

def gpu_add():
    pass

kernels = {"cpu": {"add": cpu_add}, "gpu": {"add": gpu_add}}

def dispatch(device, op):
    return kernels[device][op]()

dispatch("cpu", "add")
