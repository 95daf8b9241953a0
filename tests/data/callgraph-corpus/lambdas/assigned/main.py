def helper(x):
    return x + 1

inc = lambda x: helper(x)
inc(1)
