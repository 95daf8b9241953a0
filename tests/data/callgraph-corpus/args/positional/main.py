def target():
    return 1

def call_it(fn, times):
    for _ in range(times):
        fn()

call_it(target, 2)
