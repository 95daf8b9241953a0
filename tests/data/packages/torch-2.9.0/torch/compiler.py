def disable(fn=None, recursive=True):
    """Marks a function as one dynamo must not trace."""
    if fn is None:
        return lambda f: disable(f, recursive)
    fn._torchdynamo_disable = True
    return fn
